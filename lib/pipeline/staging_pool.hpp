// Staging blocks kept from one run to the next in the same process. Making a
// ring ready costs time in every run: on the H200 node pinning 1.5 GB (three
// slabs and the resident multBy) took 0.75 s, most of a 20-date call of the
// Python module's multiply. A process that runs many jobs (the Python
// module: multiply() and run()) turns keeping on; the next run then takes
// the kept blocks instead of making new ones. Off by default: the CLI runs
// one job per process and frees its ring at the end.
//
// No Kokkos here: the pool is a list of owned blocks (pinned or plain host
// pages, pipeline/stage_parts.hpp and backend/host_pages.hpp), so its rules
// have a unit test of their own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace discount::pipeline_detail {

// Blocks under this size are neither kept nor handed out: pinning one takes
// about a millisecond, and a small job (a 1 x 1 x 1 multiply) must not take
// or drop the blocks a large one kept.
constexpr std::size_t kKeptBlockMinBytes = std::size_t{16} << 20;

// Block: owns its memory and has `std::size_t bytes() const`.
template <class Block>
class StagingPool {
 public:
  void set_keep(bool keep) {
    std::vector<std::unique_ptr<Block>> dropped;
    std::lock_guard<std::mutex> lock(mutex_);
    keep_ = keep;
    if (!keep) dropped.swap(kept_);  // freed after the lock is let go
  }

  // The smallest kept block of at least `bytes` and at most twice that, or
  // null (the caller makes a new one).
  std::unique_ptr<Block> take(std::size_t bytes) {
    if (bytes < kKeptBlockMinBytes) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if ((*it)->bytes() >= bytes && (*it)->bytes() / 2 <= bytes &&
          (best == kept_.end() || (*it)->bytes() < (*best)->bytes()))
        best = it;
    if (best == kept_.end()) return nullptr;
    std::unique_ptr<Block> block = std::move(*best);
    kept_.erase(best);
    return block;
  }

  // A run's blocks at its end (the vector is emptied). With keeping on, the
  // blocks large enough to keep replace the kept set, so the pool holds one
  // run's ring at most; the rest are freed. A run with no such block leaves
  // the kept set as it was.
  void give_back(std::vector<std::unique_ptr<Block>>& blocks) {
    std::vector<std::unique_ptr<Block>> dropped;  // freed after the lock is let go
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<std::unique_ptr<Block>> keep;
      for (auto& block : blocks) {
        if (!block) continue;
        if (keep_ && block->bytes() >= kKeptBlockMinBytes)
          keep.push_back(std::move(block));
        else
          dropped.push_back(std::move(block));
      }
      if (!keep.empty()) {
        for (auto& old : kept_) dropped.push_back(std::move(old));
        kept_ = std::move(keep);
      }
    }
    blocks.clear();
  }

  // Frees every kept block (keeping stays as it was).
  void clear() {
    std::vector<std::unique_ptr<Block>> dropped;
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(kept_);
  }

  std::size_t kept_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t total = 0;
    for (const auto& block : kept_) total += block->bytes();
    return total;
  }

 private:
  mutable std::mutex mutex_;
  bool keep_ = false;
  std::vector<std::unique_ptr<Block>> kept_;
};

// The process's pool for one kind of block. Never destroyed: a pinned block
// freed after the GPU runtime's own teardown at exit would fail; whoever
// keeps blocks empties the pool before finalising Kokkos.
template <class Block>
StagingPool<Block>& staging_pool() {
  static auto* pool = new StagingPool<Block>;
  return *pool;
}

}  // namespace discount::pipeline_detail
