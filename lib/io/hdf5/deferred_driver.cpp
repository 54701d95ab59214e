#include "io/hdf5/deferred_driver.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <utility>

#include "common/affinity.hpp"

namespace discount::h5 {

namespace {

// Raw writes this large go to the writer; smaller ones are made at once.
constexpr std::size_t kDeferAtLeast = std::size_t{64} << 10;

// Bytes the next write from this thread may take instead of copying.
thread_local std::vector<std::uint8_t> t_handed;

// Writes `n` bytes at `at`; false with errno set on failure.
bool write_all(int fd, const std::uint8_t* p, std::size_t n, std::uint64_t at) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, std::min<std::size_t>(n, std::size_t{1} << 30), static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    p += w, n -= static_cast<std::size_t>(w), at += static_cast<std::uint64_t>(w);
  }
  return true;
}

#if H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10
// Reads `n` bytes at `at`, zeros past the end of the file; false on error.
bool read_all(int fd, std::uint8_t* p, std::size_t n, std::uint64_t at) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, std::min<std::size_t>(n, std::size_t{1} << 30), static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) {
      std::memset(p, 0, n);
      return true;
    }
    p += r, n -= static_cast<std::size_t>(r), at += static_cast<std::uint64_t>(r);
  }
  return true;
}

// The driver info a file access property list carries.
struct Info {
  DeferredWrites* writes;
};

// One open file. HDF5 casts between H5FD_t and this: `pub` comes first.
struct File {
  H5FD_t pub;
  int fd;
  haddr_t eoa, eof;
  dev_t device;
  ino_t inode;
  DeferredWrites* writes;
};

File* as_file(H5FD_t* f) { return reinterpret_cast<File*>(f); }
const File* as_file(const H5FD_t* f) { return reinterpret_cast<const File*>(f); }

H5FD_t* open_file(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  if (!name || !*name || maxaddr == 0 || maxaddr == HADDR_UNDEF) return nullptr;
  int o = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
  if (flags & H5F_ACC_TRUNC) o |= O_TRUNC;
  if (flags & H5F_ACC_CREAT) o |= O_CREAT;
  if (flags & H5F_ACC_EXCL) o |= O_EXCL;
  const int fd = ::open(name, o | O_CLOEXEC, 0666);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return nullptr;
  }
  auto* file = new File{};
  file->fd = fd;
  file->eof = static_cast<haddr_t>(st.st_size);
  file->device = st.st_dev;
  file->inode = st.st_ino;
  const auto* info = static_cast<const Info*>(H5Pget_driver_info(fapl));
  file->writes = info ? info->writes : nullptr;
  if (file->writes) file->writes->attach(fd, &file->writes);
  return &file->pub;
}

herr_t close_file(H5FD_t* f) {
  File* file = as_file(f);
  bool ok = true;
  if (file->writes) {
    ok = file->writes->drain();
    file->writes->detach();
  }
  ok = ::close(file->fd) == 0 && ok;
  delete file;
  return ok ? 0 : -1;
}

int compare(const H5FD_t* a, const H5FD_t* b) {
  const File *x = as_file(a), *y = as_file(b);
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  if (x->inode != y->inode) return x->inode < y->inode ? -1 : 1;
  return 0;
}

herr_t query(const H5FD_t*, unsigned long* flags) {
  if (flags)
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

haddr_t get_eoa(const H5FD_t* f, H5FD_mem_t) { return as_file(f)->eoa; }
herr_t set_eoa(H5FD_t* f, H5FD_mem_t, haddr_t addr) {
  as_file(f)->eoa = addr;
  return 0;
}
haddr_t get_eof(const H5FD_t* f, H5FD_mem_t) { return as_file(f)->eof; }

herr_t get_handle(H5FD_t* f, hid_t, void** handle) {
  if (!handle) return -1;
  *handle = &as_file(f)->fd;
  return 0;
}

herr_t read_at(H5FD_t* f, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  File* file = as_file(f);
  if (file->writes && !file->writes->drain()) return -1;
  return read_all(file->fd, static_cast<std::uint8_t*>(buffer), size, addr) ? 0 : -1;
}

herr_t write_at(H5FD_t* f, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, const void* buffer) {
  File* file = as_file(f);
  file->eof = std::max<haddr_t>(file->eof, addr + size);
  if (file->writes && type == H5FD_MEM_DRAW && size >= kDeferAtLeast) {
    std::vector<std::uint8_t> bytes;
    if (t_handed.data() == buffer && t_handed.size() == size)
      bytes = std::move(t_handed);
    else
      bytes.assign(static_cast<const std::uint8_t*>(buffer), static_cast<const std::uint8_t*>(buffer) + size);
    t_handed.clear();
    file->writes->store(addr, std::move(bytes));
    return file->writes->error().empty() ? 0 : -1;
  }
  return write_all(file->fd, static_cast<const std::uint8_t*>(buffer), size, addr) ? 0 : -1;
}

herr_t flush_file(H5FD_t* f, hid_t, hbool_t) {
  File* file = as_file(f);
  return !file->writes || file->writes->drain() ? 0 : -1;
}

herr_t truncate_file(H5FD_t* f, hid_t, hbool_t) {
  File* file = as_file(f);
  if (file->writes && !file->writes->drain()) return -1;
  if (file->eoa != file->eof) {
    if (::ftruncate(file->fd, static_cast<off_t>(file->eoa)) != 0) return -1;
    file->eof = file->eoa;
  }
  return 0;
}

const H5FD_class_t kClass = {
    "discount_deferred",
    (haddr_t{1} << 63) - 1,  // maxaddr: what an off_t holds
    H5F_CLOSE_WEAK,
    nullptr,  // terminate
    nullptr,
    nullptr,
    nullptr,  // superblock: no driver block
    sizeof(Info),
    nullptr,
    nullptr,
    nullptr,  // fapl: copied by HDF5
    0,
    nullptr,
    nullptr,  // dxpl
    open_file,
    close_file,
    compare,
    query,
    nullptr,  // get_type_map
    nullptr,
    nullptr,  // alloc, free: HDF5's own
    get_eoa,
    set_eoa,
    get_eof,
    get_handle,
    read_at,
    write_at,
    flush_file,
    truncate_file,
    nullptr,
    nullptr,  // lock, unlock: private files
    H5FD_FLMAP_DICHOTOMY,
};

hid_t driver_id() {
  static hid_t id = H5FDregister(&kClass);
  return id;
}
#endif

}  // namespace

DeferredWrites::DeferredWrites(std::size_t max_bytes, Recycle recycle)
    : max_bytes_(max_bytes), recycle_(std::move(recycle)), thread_([this] { run(); }) {}

DeferredWrites::~DeferredWrites() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (user_) *user_ = nullptr;  // the file, still open in HDF5, writes by itself from now on
  }
  changed_.notify_all();
  thread_.join();
}

bool DeferredWrites::available() {
#if H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10
  return true;
#else
  return false;
#endif
}

hid_t DeferredWrites::file_access() const {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#if H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10
  const Info info{const_cast<DeferredWrites*>(this)};
  if (fapl >= 0 && (driver_id() < 0 || H5Pset_driver(fapl, driver_id(), &info) < 0)) {
    H5Pclose(fapl);
    return -1;
  }
#endif
  return fapl;
}

void DeferredWrites::hand_over(std::vector<std::uint8_t>&& bytes) { t_handed = std::move(bytes); }
void DeferredWrites::take_back() { t_handed.clear(); }

std::string DeferredWrites::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void DeferredWrites::attach(int fd, DeferredWrites** user) {
  std::lock_guard<std::mutex> lock(mutex_);
  fd_ = fd;
  user_ = user;
}

void DeferredWrites::detach() {
  drain();
  std::lock_guard<std::mutex> lock(mutex_);
  fd_ = -1;
  user_ = nullptr;
}

void DeferredWrites::store(std::uint64_t at, std::vector<std::uint8_t>&& bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock,
                [&] { return queued_bytes_ == 0 || queued_bytes_ + bytes.size() <= max_bytes_ || !error_.empty(); });
  if (!error_.empty()) return;
  queued_bytes_ += bytes.size();
  jobs_.push_back({at, std::move(bytes)});
  changed_.notify_all();
}

bool DeferredWrites::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  // After a failed store the thread skips the rest, so this ends soon; it
  // waits all the same, as the file is closed next.
  changed_.wait(lock, [&] { return jobs_.empty() && !busy_; });
  return error_.empty();
}

void DeferredWrites::run() {
  use_process_affinity();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
    if (jobs_.empty()) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    const int fd = fd_;
    const bool failed = !error_.empty();
    lock.unlock();
    const auto begin = std::chrono::steady_clock::now();
    int why = 0;
    if (!failed && !write_all(fd, job.bytes.data(), job.bytes.size(), job.at)) why = errno;
    busy_ns_ += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - begin).count());
    const std::size_t size = job.bytes.size();
    if (recycle_) recycle_(std::move(job.bytes));
    job.bytes = {};
    lock.lock();
    queued_bytes_ -= size;
    busy_ = false;
    if (why != 0 && error_.empty()) {
      error_ =
          "writing " + std::to_string(size) + " bytes at offset " + std::to_string(job.at) + ": " + std::strerror(why);
      errno_ = why;
    }
    changed_.notify_all();
  }
}

}  // namespace discount::h5
