// Positional reads and writes of box runs at a dataset's file offset, spread
// over a few threads: one stream of page-cache copies is slower than the disk
// on the nodes we target.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "io/posix/box.hpp"

namespace discount {

// An owned file descriptor, closed once on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { reset(); }
  void reset();
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// Called with (buffer offset, bytes) of each piece of a read as soon as it
// has arrived, on the thread that read it (several threads at once).
using PieceHook = std::function<void(std::uint64_t, std::uint64_t)>;

// Moves the runs (element units of `element_bytes`) between the file at
// `base` bytes and the packed buffer. Throws discount::Error (io_error) with
// `what` and the OS reason on failure. With `after`, the runs go in pieces of
// 1 MiB (whole elements), each handed to `after` once it is read or written,
// while still in cache. Writes to a memory-backed file take one thread: it
// lets one writer in at a time (its inode lock), and more threads only spin.
void pread_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, void* buffer, std::size_t element_bytes,
                const std::string& what, const PieceHook& after = {});
void pwrite_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                 std::size_t element_bytes, const std::string& what, const PieceHook& after = {});

// The same on the calling thread alone, in one call per run (memory.staging:
// none: each I/O thread moves its own small pieces).
void pread_runs_here(int fd, std::uint64_t base, const std::vector<Run>& runs, void* buffer, std::size_t element_bytes,
                     const std::string& what);
void pwrite_runs_here(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                      std::size_t element_bytes, const std::string& what);

// True when `path` is on a memory-backed file system (tmpfs, ramfs).
bool memory_backed(const std::string& path);

// Starts the write-out of `fd`'s dirty pages to its device without waiting
// for it (Linux sync_file_range; elsewhere nothing). A later fdatasync then
// finds most of them written. Errors are left to that fdatasync.
void start_writeback(int fd);

// Writes that bypass the page cache (O_DIRECT). The 4 KiB-aligned middle of
// each run is copied into an aligned bounce buffer and written through
// `direct_fd`; the unaligned edges (under 4 KiB at each end of a run) go
// through `fd` and the page cache. Both name the same file, so one fdatasync
// covers both. On this project's VMs and nodes, writing through the page
// cache ran at a third to a half of the disk's O_DIRECT speed
// (docs/performance.md). If the file system refuses O_DIRECT (EINVAL) the
// writer falls back to `fd` for good, and says so in describe().
class DirectWriter {
 public:
  static constexpr std::uint64_t kAlign = 4096;
  static constexpr std::uint64_t kMaxPiece = std::uint64_t{4} << 20;
  // Writer threads, each with one bounce buffer of piece_for() bytes.
  static unsigned threads();
  // The bounce buffer for a host budget: 4 MiB, or less so that the
  // `threads` buffers take at most an eighth of the budget (never under 4 KiB).
  // Inline: resolve sizes the staging with it and links no io code.
  static std::uint64_t piece_for(std::uint64_t host_budget, unsigned threads) {
    const std::uint64_t share = host_budget / (8 * std::uint64_t{threads > 1 ? threads : 1u}) / kAlign * kAlign;
    return share < kAlign ? kAlign : share > kMaxPiece ? kMaxPiece : share;
  }

  // Opens `path` a second time with O_DIRECT. active() is false when the
  // file system refuses it.
  DirectWriter(const std::string& path, std::uint64_t piece_bytes);
  ~DirectWriter();
  DirectWriter(const DirectWriter&) = delete;
  DirectWriter& operator=(const DirectWriter&) = delete;

  bool active() const { return direct_fd_ >= 0 && !refused_; }
  // The file lives in memory (tmpfs, ramfs): written through the page cache
  // on purpose, straight from the caller's buffer.
  bool memory_backed() const { return memory_backed_; }
  // `after` as for pwrite_runs, only where hooks_while_writing(): O_DIRECT
  // pieces need not end between elements (std::logic_error otherwise).
  void write_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                  std::size_t element_bytes, const std::string& what, const PieceHook& after = {});
  // Pieces reach `after` as they are written (not after the whole write).
  bool hooks_while_writing() const { return memory_backed_ || !active(); }
  void close();

 private:
  int direct_fd_ = -1;
  bool memory_backed_ = false;
  std::atomic<bool> refused_{false};  // set by any writer thread on EINVAL
  std::uint64_t piece_;
  std::vector<char*> bounce_;  // one piece_ buffer per thread, kAlign-aligned, made on first use
  // One write_runs at a time through the bounce buffers: two pipeline writers
  // may reach the same file (a split output's part on resume, when the slabs
  // left lie in fewer parts than there are writers).
  std::mutex mutex_;
};

}  // namespace discount
