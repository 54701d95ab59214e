#include "io/posix_io.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "common/error.hpp"
#include "common/host_parallel.hpp"

namespace discount {

namespace {

struct Segment {
  std::uint64_t file_offset;
  std::uint64_t buffer_offset;
  std::uint64_t bytes;
};

std::vector<Segment> segments(std::uint64_t base, const std::vector<Run>& runs, std::size_t element_bytes) {
  constexpr std::uint64_t piece = std::uint64_t{16} << 20;  // enough in flight, not too many syscalls
  std::vector<Segment> out;
  std::uint64_t buffer_offset = 0;
  for (const auto& run : runs) {
    std::uint64_t file_offset = base + static_cast<std::uint64_t>(run.offset) * element_bytes;
    std::uint64_t left = static_cast<std::uint64_t>(run.length) * element_bytes;
    while (left > 0) {
      const std::uint64_t n = std::min(left, piece);
      out.push_back({file_offset, buffer_offset, n});
      file_offset += n;
      buffer_offset += n;
      left -= n;
    }
  }
  return out;
}

std::string reason(int err) {
  if (err == ENOSPC) return "no space left on device";
  if (err == EFBIG) return "file size limit exceeded (ulimit -f)";
  if (err == EDQUOT) return "disk quota exceeded";
  return std::strerror(err);
}

template <class Op>
void transfer(std::uint64_t base, const std::vector<Run>& runs, std::size_t element_bytes, const std::string& what,
              const char* verb, Op op) {
  const auto work = segments(base, runs, element_bytes);
  std::atomic<std::size_t> next{0};
  std::atomic<int> first_error{0};
  std::mutex mutex;
  std::string detail;
  auto worker = [&](unsigned) {
    for (std::size_t s = next++; s < work.size() && first_error.load() == 0; s = next++) {
      const Segment& seg = work[s];
      std::uint64_t done = 0;
      while (done < seg.bytes) {
        const ssize_t n = op(seg, done);
        if (n > 0) {
          done += static_cast<std::uint64_t>(n);
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        const int err = n < 0 ? errno : EIO;
        int expected = 0;
        if (first_error.compare_exchange_strong(expected, err)) {
          std::lock_guard<std::mutex> lock(mutex);
          detail = n == 0 ? "unexpected end of file at byte " + std::to_string(seg.file_offset + done) : reason(err);
        }
        return;
      }
    }
  };
  run_on_threads(static_cast<unsigned>(std::min<std::size_t>(io_threads(), work.size())), worker);
  if (first_error.load() != 0) throw io_error(what + ": " + verb + " failed: " + detail);
}

}  // namespace

void pread_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, void* buffer, std::size_t element_bytes,
                const std::string& what) {
  auto* bytes = static_cast<char*>(buffer);
  transfer(base, runs, element_bytes, what, "read", [&](const Segment& seg, std::uint64_t done) {
    return ::pread(fd, bytes + seg.buffer_offset + done, seg.bytes - done, static_cast<off_t>(seg.file_offset + done));
  });
}

void pwrite_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                 std::size_t element_bytes, const std::string& what) {
  const auto* bytes = static_cast<const char*>(buffer);
  transfer(base, runs, element_bytes, what, "write", [&](const Segment& seg, std::uint64_t done) {
    return ::pwrite(fd, bytes + seg.buffer_offset + done, seg.bytes - done,
                    static_cast<off_t>(seg.file_offset + done));
  });
}

}  // namespace discount
