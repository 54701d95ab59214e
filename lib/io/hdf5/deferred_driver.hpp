// An HDF5 file driver whose large raw-data writes are stored by a thread of
// the file's own. HDF5 1.10 is not thread-safe, so one thread makes every
// HDF5 call; with this driver a direct chunk write returns once HDF5 has
// placed the chunk, and the copy into the file (the slow part on tmpfs,
// where one file takes one writer at a time) runs on the file's writer
// while HDF5 places the next chunk of another file. Metadata and small
// writes are made at once, in order; reads, flushes, truncation and close
// first wait for every write handed over. With HDF5 other than 1.10 (whose
// driver table differs) `available()` is false and callers use sec2.
#pragma once

#include <hdf5.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace discount::h5 {

class DeferredWrites {
 public:
  // At most `max_bytes` handed over and not yet stored; HDF5's write waits
  // past that. Each write's bytes, once stored, go to `recycle` when given
  // (the caller's buffers kept for their next chunk), else are freed.
  using Recycle = std::function<void(std::vector<std::uint8_t>&&)>;
  explicit DeferredWrites(std::size_t max_bytes, Recycle recycle = {});
  ~DeferredWrites();
  DeferredWrites(const DeferredWrites&) = delete;
  DeferredWrites& operator=(const DeferredWrites&) = delete;

  static bool available();
  // A new file access property list that opens files with this driver,
  // their writes stored by this object's thread. One file at a time.
  hid_t file_access() const;

  // The next HDF5 write of exactly these bytes, from this thread, takes
  // them instead of copying them (an encoded chunk about to be handed to
  // H5Dwrite_chunk). Cleared by the write or by `take_back`.
  static void hand_over(std::vector<std::uint8_t>&& bytes);
  static void take_back();

  // The first failed store ("pwrite at 123: No space left on device"), or "".
  std::string error() const;
  int error_number() const { return errno_.load(); }
  double busy_seconds() const { return static_cast<double>(busy_ns_.load()) * 1e-9; }

  // For the driver: the open file's descriptor, and where the file keeps
  // its pointer to this object, cleared when this object goes first (HDF5
  // may close a file whose close failed once more, at exit).
  void attach(int fd, DeferredWrites** user);
  void store(std::uint64_t at, std::vector<std::uint8_t>&& bytes);
  bool drain();  // waits until all is stored; false when a store failed
  void detach();

 private:
  struct Job {
    std::uint64_t at;
    std::vector<std::uint8_t> bytes;
  };
  void run();

  const std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> jobs_;
  std::size_t queued_bytes_ = 0;
  bool busy_ = false, stopping_ = false;
  int fd_ = -1;
  DeferredWrites** user_ = nullptr;
  std::string error_;
  std::atomic<int> errno_{0};
  std::atomic<std::uint64_t> busy_ns_{0};
  const Recycle recycle_;
  std::thread thread_;
};

}  // namespace discount::h5
