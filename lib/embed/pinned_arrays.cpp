#include "embed/pinned_arrays.hpp"

#include <iterator>
#include <map>
#include <mutex>

#include "backend/gpu_runtime.hpp"

namespace discount::embed {

namespace {

std::mutex g_mutex;
// Pinned ranges by their first byte: their sizes. Ranges never overlap (each
// is one array's own allocation, pinned once).
std::map<const char*, std::size_t>& ranges() {
  static std::map<const char*, std::size_t> pinned;
  return pinned;
}

}  // namespace

bool pin_array(void* data, std::size_t bytes) {
  if (!data || bytes == 0) return false;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& pinned = ranges();
  const auto* begin = static_cast<const char*>(data);
  auto at = pinned.upper_bound(begin);
  if (at != pinned.begin()) {
    const auto before = std::prev(at);
    if (begin + bytes <= before->first + before->second) return true;  // inside one pinned already
    if (begin < before->first + before->second) return false;          // overlaps one: leave it
  }
  if (at != pinned.end() && at->first < begin + bytes) return false;
  // Portable: a weakref callback on any Python thread may undo it.
  if (!gpu::register_host(data, bytes, true)) return false;
  pinned.emplace(begin, bytes);
  return true;
}

std::uint64_t unpin_array(void* data) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& pinned = ranges();
  const auto at = pinned.find(static_cast<const char*>(data));
  if (at == pinned.end()) return 0;
  gpu::unregister_host(data);
  const std::uint64_t bytes = at->second;
  pinned.erase(at);
  return bytes;
}

std::uint64_t unpin_all_arrays() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::uint64_t bytes = 0;
  for (const auto& [begin, size] : ranges()) {
    gpu::unregister_host(const_cast<char*>(begin));
    bytes += size;
  }
  ranges().clear();
  return bytes;
}

std::uint64_t pinned_array_bytes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::uint64_t bytes = 0;
  for (const auto& entry : ranges()) bytes += entry.second;
  return bytes;
}

bool array_is_pinned(const void* data, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto& pinned = ranges();
  const auto* begin = static_cast<const char*>(data);
  auto at = pinned.upper_bound(begin);
  if (at == pinned.begin()) return false;
  --at;
  return begin + bytes <= at->first + at->second;
}

}  // namespace discount::embed
