#include "io/posix/posix_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <mutex>
#include <stdexcept>

#include "common/error.hpp"
#include "common/host_parallel.hpp"

namespace discount {

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

namespace {

struct Segment {
  std::uint64_t file_offset;
  std::uint64_t buffer_offset;
  std::uint64_t bytes;
  bool direct = false;  // DirectWriter: aligned, through the bounce buffer
};

constexpr std::uint64_t kPiece = std::uint64_t{16} << 20;  // enough in flight, not too many syscalls

// Appends the file range [file_offset, file_offset + bytes) in pieces of at
// most `piece` bytes; the buffer holds the ranges packed in order, and
// `buffer_offset` moves past this one.
void add_pieces(std::vector<Segment>& out, std::uint64_t& buffer_offset, std::uint64_t file_offset, std::uint64_t bytes,
                std::uint64_t piece, bool direct) {
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t n = std::min(bytes - done, piece);
    out.push_back({file_offset + done, buffer_offset, n, direct});
    buffer_offset += n;
    done += n;
  }
}

// With a hook, pieces small enough to be still in the core's cache when the
// hook reads them (whole elements): the hook then costs no pass over memory
// of its own.
std::uint64_t piece_for_hook(const PieceHook& after, std::size_t element_bytes) {
  return after ? kCachePieceBytes / element_bytes * element_bytes : kPiece;
}

std::vector<Segment> segments(std::uint64_t base, const std::vector<Run>& runs, std::size_t element_bytes,
                              std::uint64_t piece = kPiece) {
  std::vector<Segment> out;
  std::uint64_t buffer_offset = 0;
  for (const auto& run : runs)
    add_pieces(out, buffer_offset, base + static_cast<std::uint64_t>(run.offset) * element_bytes,
               static_cast<std::uint64_t>(run.length) * element_bytes, piece, false);
  return out;
}

std::string reason(int err) {
  if (err == ENOSPC) return "no space left on device";
  if (err == EFBIG) return "file size limit exceeded (ulimit -f)";
  if (err == EDQUOT) return "disk quota exceeded";
  return std::strerror(err);
}

// Runs op(segment, bytes done, thread) until each segment is done, on up to
// `threads` threads; the first error stops the rest and is thrown.
template <class Op>
void transfer(const std::vector<Segment>& work, unsigned threads, const std::string& what, const char* verb, Op op,
              const PieceHook* after = nullptr) {
  std::atomic<std::size_t> next{0};
  std::atomic<int> first_error{0};
  std::mutex mutex;
  std::string detail;
  auto worker = [&](unsigned thread) {
    for (std::size_t s = next++; s < work.size() && first_error.load() == 0; s = next++) {
      const Segment& seg = work[s];
      std::uint64_t done = 0;
      while (done < seg.bytes) {
        const ssize_t n = op(seg, done, thread);
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
      if (after) (*after)(seg.buffer_offset, seg.bytes);
    }
  };
  run_on_threads(static_cast<unsigned>(std::min<std::size_t>(threads, work.size())), worker);
  if (first_error.load() != 0) throw io_error(what + ": " + verb + " failed: " + detail);
}

// Positional reads and writes of the segments between the file and the
// packed buffer, on up to `threads` threads.
void read_segments(int fd, const std::vector<Segment>& work, void* buffer, unsigned threads, const std::string& what,
                   const PieceHook* after) {
  auto* bytes = static_cast<char*>(buffer);
  transfer(
      work, threads, what, "read",
      [&](const Segment& seg, std::uint64_t done, unsigned) {
        return ::pread(fd, bytes + seg.buffer_offset + done, seg.bytes - done,
                       static_cast<off_t>(seg.file_offset + done));
      },
      after);
}

void write_segments(int fd, const std::vector<Segment>& work, const void* buffer, unsigned threads,
                    const std::string& what, const PieceHook* after) {
  const auto* bytes = static_cast<const char*>(buffer);
  transfer(
      work, threads, what, "write",
      [&](const Segment& seg, std::uint64_t done, unsigned) {
        return ::pwrite(fd, bytes + seg.buffer_offset + done, seg.bytes - done,
                        static_cast<off_t>(seg.file_offset + done));
      },
      after);
}

}  // namespace

void pread_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, void* buffer, std::size_t element_bytes,
                const std::string& what, const PieceHook& after) {
  read_segments(fd, segments(base, runs, element_bytes, piece_for_hook(after, element_bytes)), buffer, io_threads(),
                what, after ? &after : nullptr);
}

void pread_runs_here(int fd, std::uint64_t base, const std::vector<Run>& runs, void* buffer, std::size_t element_bytes,
                     const std::string& what) {
  read_segments(fd, segments(base, runs, element_bytes, kPiece), buffer, 1, what, nullptr);
}

void pwrite_runs_here(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                      std::size_t element_bytes, const std::string& what) {
  write_segments(fd, segments(base, runs, element_bytes, kPiece), buffer, 1, what, nullptr);
}

namespace {

bool memory_file_system(const struct statfs& info) {
  constexpr unsigned long kTmpfs = 0x01021994, kRamfs = 0x858458f6;  // linux/magic.h
  const auto type = static_cast<unsigned long>(info.f_type);
  return type == kTmpfs || type == kRamfs;
}

}  // namespace

void pwrite_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                 std::size_t element_bytes, const std::string& what, const PieceHook& after) {
  // A memory-backed file takes one pwrite() at a time (its inode lock):
  // further threads would only spin on that lock, taking the cores the
  // reader and other files' writers need. One thread for such a file.
  struct statfs info {};
  const bool in_memory = ::fstatfs(fd, &info) == 0 && memory_file_system(info);
  write_segments(fd, segments(base, runs, element_bytes, piece_for_hook(after, element_bytes)), buffer,
                 in_memory ? 1u : io_threads(), what, after ? &after : nullptr);
}

unsigned DirectWriter::threads() {
  // At least two, so that one thread copies into its bounce buffer while
  // another one's write is with the disk.
  return std::max(2u, io_threads());
}

bool memory_backed(const std::string& path) {
  struct statfs info {};
  return ::statfs(path.c_str(), &info) == 0 && memory_file_system(info);
}

void start_writeback(int fd) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  // Offset 0 and 0 bytes: the whole file. Pages already under write-out are
  // skipped; the call blocks only while the device's queue is full.
  (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
#endif
}

DirectWriter::DirectWriter(const std::string& path, std::uint64_t piece_bytes)
    : piece_(std::max(kAlign, piece_bytes / kAlign * kAlign)) {
  // A memory-backed file system (tmpfs since Linux 6.6) takes O_DIRECT but
  // still copies into its page cache: the bounce buffer would only add a
  // second copy, so the runs are written straight from the caller's buffer.
  memory_backed_ = discount::memory_backed(path);
#ifdef O_DIRECT
  if (!memory_backed_) direct_fd_ = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
#else
  (void)path;
#endif
}

DirectWriter::~DirectWriter() {
  close();
  for (char* b : bounce_) std::free(b);
}

void DirectWriter::close() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
  direct_fd_ = -1;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL
#endif

// On a memory-backed file system, writes to one file take its inode lock, so
// parallel pwrite()s run one at a time (3.6 GB/s on the H200 node, where 8
// dd streams into 8 files reached 13 GB/s). Page faults on a shared mapping
// take no such lock: each thread maps nothing itself, but populates its own
// pages of one mapping of the runs' span (MADV_POPULATE_WRITE: a full tmpfs
// is an error return there, where a plain store would raise SIGBUS) and
// copies into them. A kernel without MADV_POPULATE_WRITE gets pwrite().
void mapped_write_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                       std::size_t element_bytes, const std::string& what, unsigned threads, const PieceHook& after) {
  const std::vector<Segment> work = segments(base, runs, element_bytes, piece_for_hook(after, element_bytes));
  if (work.empty()) return;
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t lo = work.front().file_offset, hi = 0;
  for (const auto& seg : work) {
    lo = std::min(lo, seg.file_offset);
    hi = std::max(hi, seg.file_offset + seg.bytes);
  }
  lo = lo / page * page;
  void* map = ::mmap(nullptr, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(lo));
  if (map == MAP_FAILED) return pwrite_runs(fd, base, runs, buffer, element_bytes, what, after);
  char* const span = static_cast<char*>(map);
  const auto* bytes = static_cast<const char*>(buffer);
  try {
    transfer(
        work, threads, what, "write",
        [&](const Segment& seg, std::uint64_t done, unsigned) -> ssize_t {
          const char* src = bytes + seg.buffer_offset + done;
          const std::uint64_t n = seg.bytes - done, at = seg.file_offset + done;
          char* dst = span + (at - lo);
          const auto first = reinterpret_cast<std::uintptr_t>(dst) / page * page;
          const auto last = (reinterpret_cast<std::uintptr_t>(dst) + n + page - 1) / page * page;
          if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) != 0) {
            if (errno == EINVAL) return ::pwrite(fd, src, n, static_cast<off_t>(at));
            if (errno == EFAULT) errno = ENOSPC;  // the file system could not give the pages
            return -1;
          }
          std::memcpy(dst, src, n);
          return static_cast<ssize_t>(n);
        },
        after ? &after : nullptr);
  } catch (...) {
    ::munmap(map, hi - lo);
    throw;
  }
  ::munmap(map, hi - lo);
}

void DirectWriter::write_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                              std::size_t element_bytes, const std::string& what, const PieceHook& after) {
  if (memory_backed_) return mapped_write_runs(fd, base, runs, buffer, element_bytes, what, threads(), after);
  if (!active()) return pwrite_runs(fd, base, runs, buffer, element_bytes, what, after);
  // O_DIRECT pieces split at the file's 4 KiB boundaries, which need not
  // fall between elements: no hook here (hooks_while_writing() is false).
  if (after) throw std::logic_error("DirectWriter::write_runs: a piece hook on an O_DIRECT write");
  std::lock_guard<std::mutex> lock(mutex_);
  // Split every run at the 4 KiB boundaries of the file: edges buffered, the
  // middle direct in pieces of at most one bounce buffer.
  std::vector<Segment> work;
  std::uint64_t buffer_offset = 0;
  for (const auto& run : runs) {
    const std::uint64_t begin = base + static_cast<std::uint64_t>(run.offset) * element_bytes;
    const std::uint64_t end = begin + static_cast<std::uint64_t>(run.length) * element_bytes;
    const std::uint64_t a = (begin + kAlign - 1) / kAlign * kAlign, b = end / kAlign * kAlign;
    if (b <= a) {
      add_pieces(work, buffer_offset, begin, end - begin, kPiece, false);
      continue;
    }
    add_pieces(work, buffer_offset, begin, a - begin, kPiece, false);
    add_pieces(work, buffer_offset, a, b - a, piece_, true);
    add_pieces(work, buffer_offset, b, end - b, kPiece, false);
  }
  const unsigned n_threads = threads();
  while (bounce_.size() < n_threads) {
    void* p = std::aligned_alloc(kAlign, piece_);
    if (!p) throw io_error(what + ": cannot allocate a " + std::to_string(piece_ >> 10) + " KiB staging buffer");
    bounce_.push_back(static_cast<char*>(p));
  }
  const auto* bytes = static_cast<const char*>(buffer);
  transfer(work, n_threads, what, "write", [&](const Segment& seg, std::uint64_t done, unsigned thread) -> ssize_t {
    const char* src = bytes + seg.buffer_offset + done;
    const off_t at = static_cast<off_t>(seg.file_offset + done);
    if (!seg.direct || refused_) return ::pwrite(fd, src, seg.bytes - done, at);
    char* staging = bounce_[thread];
    std::memcpy(staging, src, seg.bytes - done);
    const ssize_t n = ::pwrite(direct_fd_, staging, seg.bytes - done, at);
    if (n < 0 && errno == EINVAL) {  // the file system refuses O_DIRECT: the page cache from now on
      refused_ = true;
      return ::pwrite(fd, src, seg.bytes - done, at);
    }
    return n;
  });
}

}  // namespace discount
