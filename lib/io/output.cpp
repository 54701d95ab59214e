#include "io/output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <future>
#include <iostream>
#include <mutex>

#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "common/quote.hpp"
#include "io/box.hpp"
#include "io/hdf5_handle.hpp"
#include "io/make_folders.hpp"
#include "io/identity.hpp"
#include "io/checksum.hpp"
#include "io/input.hpp"
#include "io/output_record.hpp"
#include "io/posix_io.hpp"
#include "io/run_table.hpp"
#include "ranks/ranks.hpp"

namespace discount {

namespace {

constexpr const char* kGroup = "discount_app";
std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// The output's box for a slab, in its axes order (the same mapping the
// reader uses for the input).
FileBox output_box(const OutputSpec& spec, Range dates, Range ids) {
  return discount_box({spec.dates, spec.ids, spec.nums}, spec.axes, dates, ids);
}

std::array<std::int64_t, 3> file_dims(const OutputSpec& spec) {
  return output_box(spec, {0, spec.dates}, {0, spec.ids}).dims;
}

// Fingerprint stored in an existing output or partial; empty if unreadable.
// An attribute of the file's discount_app group; empty when the file, the
// group or the attribute is not there (older files have no identity).
std::string stored_attribute(const std::string& path, const char* name) {
  h5::QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) return {};
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file || H5Lexists(file.get(), kGroup, H5P_DEFAULT) <= 0) return {};
  h5::Id group = h5::group(H5Gopen2(file.get(), kGroup, H5P_DEFAULT));
  if (!group || H5Aexists(group.get(), name) <= 0) return {};
  try {
    return h5::read_string_attribute(group.get(), name);
  } catch (const Error&) {
    return {};
  }
}

std::string stored_fingerprint(const std::string& path) { return stored_attribute(path, "fingerprint"); }

}  // namespace

std::string fingerprint_of(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::optional<RecordedChunkAxis> recorded_chunk_axis(const std::string& path, bool overwrite, bool restart) {
  if (restart || path.empty()) return std::nullopt;
  const auto axis_of = [](const std::string& text) -> std::optional<Axis> {
    if (text == "date") return Axis::date;
    if (text == "id") return Axis::id;
    return std::nullopt;
  };
  if (exists(path + ".partial")) {
    if (const auto axis = axis_of(stored_attribute(path + ".partial", "chunk_axis")))
      return RecordedChunkAxis{*axis, "the existing partial"};
    return std::nullopt;
  }
  if (!overwrite && exists(path))
    if (const auto axis = axis_of(stored_attribute(path, "chunk_axis")))
      return RecordedChunkAxis{*axis, "the finished output"};
  return std::nullopt;
}

FileOutput::FileOutput(const OutputSpec& spec) : spec_(spec), run_start_utc_(utc_now()) {
  if (spec.attach) {
    if (!try_resume())
      throw io_error("cannot open '" + partial_path() + "' prepared by rank 0 (is the directory shared by every rank?)");
    open_fd();
    share_free_slots();
    return;
  }
  const std::string dir = dir_of(spec.path);
  struct stat st {};
  // A missing folder is created (mkdir -p, modes from the umask); the checks below then hold for it.
  if (const std::string why = make_folders(dir); !why.empty())
    throw create_error("output.file '" + spec.path + "': its folder cannot be created (" + why +
                       "); create it by hand or choose another output.file");
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw create_error("output.file '" + spec.path + "': directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw create_error("output.file '" + spec.path + "': directory '" + dir + "' is not writable");
  take_lock();
  struct stat out_st {};
  if (::stat(spec.path.c_str(), &out_st) == 0) {
    if (!S_ISREG(out_st.st_mode))
      throw create_error("output.file '" + spec.path + "' exists and is not a regular file");
    struct stat in_st {};
    if (!spec.input_file.empty() && ::stat(spec.input_file.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
        in_st.st_ino == out_st.st_ino)
      throw create_error("output.file '" + spec.path + "' is the input file; inputs are never overwritten");
    if (!spec.overwrite) {
      if (stored_fingerprint(spec.path) == spec.fingerprint && !spec.restart) {
        check_finished_inputs();
        state_ = State::already_complete;
        return;
      }
      throw create_error("output.file '" + spec.path +
                         "' already exists; set output.overwrite: true to replace it, or choose another file");
    }
  }
  const std::string partial = partial_path();
  if (exists(partial)) {
    if (spec.restart) {
      if (::unlink(partial.c_str()) != 0)
        throw create_error("cannot remove '" + partial + "': " + std::strerror(errno));
    } else if (!try_resume()) {
      throw create_error("'" + partial + "' " + resume_refusal(partial) + "; rerun with --restart to discard it");
    }
  }
  if (state_ != State::resumed) create();
  open_fd();
  share_free_slots();
}

FileOutput::~FileOutput() {
  if (fd_ >= 0) ::close(fd_);
  // mpio_data_ and mpio_file_ (set only when a run ends without
  // close_collective) close by themselves, dataset first; then the lock goes.
}

HeldLock::~HeldLock() {
  if (fd.get() >= 0) ::unlink(path.c_str());  // while still held: see FileOutput::take_lock
}

// One job per output. flock() on `<out>.partial.lock`, kept open for the
// whole run: the kernel drops it when the process ends however it ends, so a
// file left by kill -9 never blocks; its text (pid, host) only names the
// holder. The holder unlinks the file before closing it, so a job that
// locked an unlinked file (opened just before) sees another inode at the
// path and tries again. Under MPI rank 0 holds it for the job's ranks. On
// NFS, flock() works across clients only where the mount supports it.
void FileOutput::take_lock() {
  if (!ranks::is_root()) return;
  const std::string path = lock_path();
  for (int attempt = 0; attempt < 8; ++attempt) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw create_error("cannot create the lock file '" + path + "': " + std::strerror(errno));
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err != EWOULDBLOCK)
        throw create_error("cannot lock '" + path + "': " + std::strerror(err) +
                           " (on NFS, flock needs a mount that supports it)");
      char text[256] = {};
      const ssize_t n = ::pread(fd.get(), text, sizeof text - 1, 0);
      std::string holder = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : std::string();
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      holder = printable_for_message(holder, 100);  // the lock file may hold anything
      throw create_error("another job is writing '" + partial_path() + "' (" +
                         (holder.empty() ? std::string("holder unknown") : holder) + ", lock '" + path +
                         "'); wait for it to finish, or stop it and rerun to resume");
    }
    struct stat held {}, now {};
    if (::fstat(fd.get(), &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      const std::string text = "pid " + std::to_string(::getpid()) + " on host " + host + "\n";
      if (::ftruncate(fd.get(), 0) == 0) {
        const ssize_t written = ::pwrite(fd.get(), text.data(), text.size(), 0);
        (void)written;  // the text is informative only
      }
      lock_.fd = std::move(fd);
      lock_.path = path;
      return;
    }
  }
  throw create_error("cannot take the lock '" + path + "': it keeps being replaced");
}

// Why `partial` cannot be resumed, naming what changed where it can.
std::string FileOutput::resume_refusal(const std::string& partial) const {
  const std::string stored = stored_attribute(partial, "identity");
  const std::string change = stored.empty() ? std::string{} : identity_change(stored, spec_.identity);
  if (!change.empty()) return "belongs to a different job: " + change;
  return "belongs to a different job (config or inputs changed) or is unreadable";
}

bool FileOutput::try_resume() {
  const std::string partial = partial_path();
  if (stored_fingerprint(partial) != spec_.fingerprint) return false;
  {
    h5::QuietErrors quiet;
    h5::Id file = h5::file(H5Fopen(partial.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (!file) return false;
    if (has_old_progress(file.get()))
      throw create_error("'" + partial + "' comes from an older version of discount_app (one progress byte per " +
                         axis_name(spec_.chunk_axis) + "); rerun with --restart to start over");
    const std::string damage = record_damage(file.get(), spec_, file_size(partial), layout_);
    if (!damage.empty()) throw create_error("'" + partial + "' is damaged: " + damage + "; rerun with --restart");
    // This run takes the number after the last recorded one (every rank reads
    // the same table: rank 0 writes its record only in open_collective).
    std::tie(runs_offset_, run_) = run_table_state(file.get());
  }
  UniqueFd fd(::open(partial.c_str(), spec_.attach ? O_RDONLY | O_CLOEXEC : O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) return false;
  table_ = read_table(fd.get(), layout_, partial);
  std::vector<std::size_t> outside;  // a range past the chunk axis: damaged
  for (std::size_t s = 0; s < table_.capacity(); ++s)
    if (table_.slots()[s] && table_.slots()[s]->end > unit_count()) outside.push_back(s);
  if (!outside.empty()) drop_slots(fd.get(), outside);
  if (!spec_.attach) check_resume(fd.get());
  state_ = State::resumed;
  return true;
}

void FileOutput::create() {
  const std::string tmp = spec_.path + ".partial.tmp";
  const std::string inner = spec_.dataset.substr(spec_.dataset.find_first_not_of('/') == std::string::npos
                                                     ? 0
                                                     : spec_.dataset.find_first_not_of('/'));
  if (inner.empty() || inner == kGroup || inner.rfind(std::string(kGroup) + "/", 0) == 0)
    throw config_error("output.dataset '" + spec_.dataset + "': the group '" + kGroup +
                       "' holds the job's progress record; choose another path");
  ::unlink(tmp.c_str());  // a leftover from a kill during creation holds nothing
  const auto dims = file_dims(spec_);
  const std::size_t capacity = table_capacity(spec_.slabs);
  // A file-size limit below the output's size is reported before anything is
  // written (HDF5 cannot close such a file cleanly).
  const std::uint64_t data_bytes = static_cast<std::uint64_t>(dims[0] * dims[1] * dims[2]) * sizeof(double);
  const std::uint64_t needed =
      data_bytes + (capacity + 1) * kEntryBytes + kRunTableBytes + (std::uint64_t{1} << 20);
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed)
    throw io_error("file size limit exceeded (ulimit -f): output '" + spec_.path + "' needs " +
                   format_bytes(needed) + ", the limit is " + format_bytes(limit.rlim_cur));
  struct statvfs fs {};
  if (::statvfs(dir_of(spec_.path).c_str(), &fs) == 0) {
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (free_bytes < needed)
      throw io_error("no space left on device: output '" + spec_.path + "' needs " + format_bytes(needed) +
                     ", " + format_bytes(free_bytes) + " free");
  }
  {
    h5::QuietErrors quiet;
    h5::Id file = h5::file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file) throw create_error("cannot create '" + tmp + "': " + std::strerror(errno));
    auto fail = [&](const std::string& what) {
      file.reset();
      ::unlink(tmp.c_str());
      throw io_error("creating '" + tmp + "': " + what);
    };
    // Contiguous, allocated now, never filled: the data lives at one fixed
    // offset that positional writes address for the rest of the job.
    h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
    h5::check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
    h5::check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
    h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
    // output.dataset may be a path ("results/run1/cv"): its groups are made too.
    h5::Id lcpl = h5::plist(H5Pcreate(H5P_LINK_CREATE));
    h5::check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group");
    const hsize_t hdims[3] = {static_cast<hsize_t>(dims[0]), static_cast<hsize_t>(dims[1]),
                              static_cast<hsize_t>(dims[2])};
    h5::Id space = h5::dataspace(H5Screate_simple(3, hdims, nullptr));
    h5::Id group = h5::group(H5Gcreate2(file.get(), kGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!group) fail("cannot create group");
    h5::Id data = h5::dataset(H5Dcreate2(file.get(), spec_.dataset.c_str(), H5T_IEEE_F64LE, space.get(), lcpl.get(),
                                         dcpl.get(), H5P_DEFAULT));
    if (!data) fail("cannot create dataset '" + spec_.dataset + "' " + h5::shape_string({hdims, hdims + 3}));
    if (!create_record(file.get(), capacity)) fail("cannot create the progress record");
    table_ = RangeTable(capacity);
    runs_offset_ = create_run_table(file.get());
    if (runs_offset_ == 0) fail("cannot create the run record");
    try {
      h5::write_string_attribute(group.get(), "fingerprint", spec_.fingerprint);
      h5::write_string_attribute(group.get(), "identity", spec_.identity);
      h5::write_string_attribute(group.get(), "input_stat", spec_.input_stat);
      h5::write_string_attribute(group.get(), "chunk_axis", axis_name(spec_.chunk_axis));
      h5::write_string_attribute(group.get(), "provenance", spec_.provenance);
      h5::write_string_attribute(group.get(), "start_time", utc_now());
      std::string axes = std::string(axis_name(spec_.axes[0])) + "," + axis_name(spec_.axes[1]) + "," +
                         axis_name(spec_.axes[2]);
      h5::write_string_attribute(data.get(), "axes", axes);
    } catch (const Error& e) {
      fail(e.what());
    }
    const std::string damage = record_damage(file.get(), spec_, UINT64_MAX, layout_);
    if (!damage.empty()) fail(damage);
    run_ = 1;
    data.reset();
    group.reset();
    // Closing writes the metadata and sets the file's size; a full disk or a
    // file-size limit shows here.
    if (!file.close()) {
      ::unlink(tmp.c_str());
      throw io_error("creating '" + tmp + "': " + std::string(errno == EFBIG ? "file size limit exceeded (ulimit -f)"
                                                              : errno == ENOSPC ? "no space left on device"
                                                                                : "HDF5 could not finish the file"));
    }
  }
  int fd = ::open(tmp.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw create_error("cannot reopen '" + tmp + "': " + std::strerror(errno));
  // Reserve the blocks now so a full disk is reported before hours of work.
  // A memory-backed file system would allocate (and zero) every page here, a
  // second or more per 10 GB before the first read: there the free space is
  // checked instead, and the writes take the pages as they go (a full tmpfs
  // mid-run is an error there too, io/posix_io.hpp).
  const std::uint64_t bytes = data_bytes;
  int rc = 0;
  if (memory_backed(tmp)) {
    struct statvfs info {};
    if (::fstatvfs(fd, &info) == 0 &&
        static_cast<std::uint64_t>(info.f_bavail) * static_cast<std::uint64_t>(info.f_frsize) < bytes)
      rc = ENOSPC;
  } else {
    rc = ::posix_fallocate(fd, static_cast<off_t>(layout_.data_offset), static_cast<off_t>(bytes));
  }
  if (rc == ENOSPC || rc == EFBIG || rc == EDQUOT) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw io_error("output '" + spec_.path + "' needs " + format_bytes(bytes) + ": " +
                   (rc == ENOSPC ? "no space left on device" : rc == EFBIG ? "file size limit exceeded (ulimit -f)"
                                                                            : "disk quota exceeded"));
  }
  // The input file as this partial first sees it (a resume compares).
  try {
    write_file_id(fd, layout_, input_file_id(spec_.input_file), tmp);
  } catch (const Error&) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), partial_path().c_str()) != 0)
    throw create_error("cannot rename '" + tmp + "': " + std::strerror(errno));
  fsync_dir(dir_of(spec_.path));
  state_ = State::fresh;
}

void FileOutput::open_fd() {
  fd_ = ::open(partial_path().c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) throw create_error("cannot open '" + partial_path() + "' for writing: " + std::strerror(errno));
  if (spec_.direct_io) direct_ = std::make_unique<DirectWriter>(partial_path(), spec_.direct_piece);
}

std::int64_t FileOutput::units_done() const { return table_.units_covered(); }

std::int64_t FileOutput::unit_count() const { return spec_.chunk_axis == Axis::date ? spec_.dates : spec_.ids; }

std::uint64_t FileOutput::piece_bytes() const {
  return spec_.read_piece_bytes > 0 ? spec_.read_piece_bytes : std::uint64_t{16} << 20;
}

std::pair<std::int64_t, std::int64_t> FileOutput::units_of(const Slab& slab) const {
  const Range r = spec_.chunk_axis == Axis::date ? slab.dates : slab.ids;
  return {r.begin, r.end};
}

// This rank's share of the record's empty slots: every rank reads the same
// table once rank 0 has checked it, and takes every ranks-th empty slot.
void FileOutput::share_free_slots() {
  const auto free = table_.free_slots();
  free_slots_.clear();
  scarce_at_ = table_.coverage().size() + 2;
  for (std::size_t j = static_cast<std::size_t>(ranks::rank()); j < free.size(); j += static_cast<std::size_t>(ranks::size()))
    free_slots_.push_back(free[j]);
  std::reverse(free_slots_.begin(), free_slots_.end());  // taken from the back, lowest first
}

bool FileOutput::slab_done(const Slab& slab) const {
  if (state_ == State::already_complete) return true;
  const auto [b, e] = units_of(slab);
  return table_.covers(b, e);
}

void FileOutput::open_collective() {
  // Every rank has opened the file by now and read the same run number:
  // rank 0 records the run's start.
  if (state_ != State::already_complete) write_run_record(fd_);
#ifdef DISCOUNT_HDF5_PARALLEL
  if (!ranks::multi() || state_ == State::already_complete) return;
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  h5::QuietErrors quiet;
  h5::Id fapl = h5::plist(H5Pcreate(H5P_FILE_ACCESS));
  h5::check(H5Pset_fapl_mpio(fapl.get(), MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  mpio_file_ = h5::file(H5Fopen(partial_path().c_str(), H5F_ACC_RDWR, fapl.get()));
  if (!mpio_file_) throw io_error("cannot open '" + partial_path() + "' through MPI-IO");
  mpio_data_ = h5::dataset(H5Dopen2(mpio_file_.get(), spec_.dataset.c_str(), H5P_DEFAULT));
  if (!mpio_data_) throw io_error("cannot open dataset '" + spec_.dataset + "' of '" + partial_path() + "'");
#endif
}

void FileOutput::close_collective() {
  stamp_run_record();
#ifdef DISCOUNT_HDF5_PARALLEL
  if (!mpio_file_) return;
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  mpio_data_.reset();
  if (!mpio_file_.close()) throw io_error("closing '" + partial_path() + "' (MPI-IO) failed");
#endif
}

// Rank 0, after every rank's work of this run is durable and recorded (the
// ranks have combined their reports): the run record's end.
void FileOutput::stamp_run_record() const {
  if (state_ == State::already_complete || !ranks::is_root() || runs_offset_ == 0) return;
  UniqueFd fd(::open(partial_path().c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) return;  // the record keeps its last checkpoint's end
  write_run_record(fd.get());
  ::fdatasync(fd.get());
}

// Rank 0's record of this run, in its slot of the run table.
void FileOutput::write_run_record(int fd) const {
  if (!ranks::is_root() || runs_offset_ == 0 || fd < 0) return;
  RunRecord record;
  record.run = run_;
  record.ranks = ranks::size();
  record.start_time = run_start_utc_;
  record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
  write_run_entry(fd, runs_offset_, record, partial_path());
}

RunHistory FileOutput::run_history() const {
  RunHistory history;
  history.unit_axis = axis_name(spec_.chunk_axis);
  h5::QuietErrors quiet;
  const std::string path = published_ ? spec_.path : partial_path();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file) return history;
  RecordLayout layout;
  if (!record_damage(file.get(), spec_, file_size(path), layout).empty()) return history;
  history.units = unit_count();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return history;
  const RangeTable done = read_table(fd.get(), layout, path);
  for (const auto& range : done.slots())
    if (range && range->end <= history.units) history.ranges.push_back({range->begin, range->end, range->run});
  history.records = read_run_records(file.get());
  return history;
}

void FileOutput::write_slab(const Slab& slab, const double* buffer, const InputSums& input) {
  const FileBox box = output_box(spec_, slab.dates, slab.ids);
  // The checksum of what is written, taken while the write goes on.
  std::future<std::uint64_t> out_sum = std::async(
      std::launch::async, [&] { return box_sum(buffer, box.dims, box.start, box.count, SumKey::output); });
#ifdef DISCOUNT_HDF5_PARALLEL
  if (mpio_data_) {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    h5::QuietErrors quiet;
    hsize_t start[3], count[3];
    for (int j = 0; j < 3; ++j) {
      start[j] = static_cast<hsize_t>(box.start[j]);
      count[j] = static_cast<hsize_t>(box.count[j]);
    }
    h5::Id file_space = h5::dataspace(H5Dget_space(mpio_data_.get()));
    h5::Id mem_space = h5::dataspace(H5Screate_simple(3, count, nullptr));
    h5::Id dxpl = h5::plist(H5Pcreate(H5P_DATASET_XFER));
    h5::check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_INDEPENDENT), "H5Pset_dxpl_mpio");
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dwrite(mpio_data_.get(), H5T_NATIVE_DOUBLE, mem_space.get(), file_space.get(), dxpl.get(), buffer) < 0)
      throw io_error("writing '" + partial_path() + "' through MPI-IO failed");
  } else
#endif
  {
    const auto runs = box_runs(box.dims, box.start, box.count);
    const std::string what = "writing '" + partial_path() + "'";
    if (direct_) direct_->write_runs(fd_, layout_.data_offset, runs, buffer, sizeof(double), what);
    else pwrite_runs(fd_, layout_.data_offset, runs, buffer, sizeof(double), what);
  }
  DoneRange done;
  std::tie(done.begin, done.end) = units_of(slab);
  done.run = run_;
  done.out_sum = out_sum.get();
  if (input.known) {
    done.flags = kHasInputSums;
    done.in_disc = input.disc;
    done.in_mult = input.mult;
  }
  unrecorded_.push_back(done);
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_checkpoint_).count() >= spec_.checkpoint_seconds) checkpoint();
}

void FileOutput::checkpoint() {
  last_checkpoint_ = std::chrono::steady_clock::now();
  if (unrecorded_.empty() || state_ == State::already_complete) return;
  // Data first, durable; only then the entries that vouch for it (each one
  // valid only once whole: io/unit_record.hpp). Entries stay small (a failed
  // checksum redoes one), until this rank's empty slots run short: then a
  // range that continues one it recorded in this run extends it in place, so
  // the run needs at most one new entry per stretch of slabs still to do.
  if (::fdatasync(fd_) != 0) throw io_error("flushing '" + partial_path() + "': " + std::strerror(errno));
  const bool mult_per_unit = spec_.chunk_axis == Axis::id;
  const bool scarce = free_slots_.size() <= scarce_at_;
  const std::int64_t most = scarce ? unit_count() : entry_units(unit_count(), table_.capacity());
  for (const DoneRange& range : coalesce(std::move(unrecorded_), mult_per_unit, most)) {
    std::optional<std::size_t> slot;
    std::optional<DoneRange> entry;
    for (auto s : own_slots_)
      if (scarce && (entry = merged(*table_.slots()[s], range, mult_per_unit))) {
        slot = s;
        break;
      }
    if (!slot) {
      if (free_slots_.empty())
        throw io_error("the progress record of '" + partial_path() + "' is full (" +
                       std::to_string(table_.capacity()) + " ranges); run the same command again to resume");
      slot = free_slots_.back();
      free_slots_.pop_back();
      own_slots_.push_back(*slot);
      entry = range;
    }
    write_slot(fd_, layout_, *slot, entry, partial_path());
    table_.set(*slot, entry);
  }
  unrecorded_.clear();
  write_run_record(fd_);
}

void FileOutput::flush() {
  if (state_ == State::already_complete || fd_ < 0) return;
  checkpoint();
  if (::fsync(fd_) != 0) throw io_error("flushing '" + partial_path() + "': " + std::strerror(errno));
  if (direct_) direct_->close();
  ::close(fd_);
  fd_ = -1;
}

void FileOutput::publish() {
  if (state_ == State::already_complete) return;
  flush();
  const std::string partial = partial_path();
  {
    // Every rank's done ranges, as the file holds them: a unit missing here
    // is a bug in the slab distribution, and the result stays partial.
    h5::QuietErrors quiet;
    const RangeTable table = [&] {
      UniqueFd fd(::open(partial.c_str(), O_RDONLY | O_CLOEXEC));
      if (fd.get() < 0) throw io_error("cannot read the progress record of '" + partial + "'");
      return read_table(fd.get(), layout_, partial);
    }();
    const std::int64_t missing = unit_count() - (table.covers(0, unit_count()) ? unit_count() : table.units_covered());
    if (missing > 0)
      throw internal_error("'" + partial + "': " + std::to_string(missing) + " " + axis_name(spec_.chunk_axis) +
                           "(s) not recorded as done at the end of the run; the partial is kept, rerun to finish it");
    h5::Id file = h5::file(H5Fopen(partial.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    if (!file) throw io_error("cannot open '" + partial + "' to finish it");
    // The provenance's end time: the only metadata change after creation,
    // made once all data and progress are durable.
    h5::Id group = h5::group(H5Gopen2(file.get(), kGroup, H5P_DEFAULT));
    if (group) h5::write_string_attribute(group.get(), "end_time", utc_now());
    group.reset();
    if (!file.close()) throw io_error("finishing '" + partial + "': HDF5 could not close the file");
  }
  int fd = ::open(partial.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (::rename(partial.c_str(), spec_.path.c_str()) != 0)
    throw io_error("renaming '" + partial + "' to '" + spec_.path + "': " + std::strerror(errno));
  published_ = true;
  fsync_dir(dir_of(spec_.path));
}

std::string FileOutput::describe() const {
  std::string text = spec_.path + " (dataset '" + spec_.dataset + "'";
  if (mpio_data_) text += ", written through MPI-IO (parallel HDF5) by " + std::to_string(ranks::size()) + " ranks";
  else if (direct_ && direct_->active()) text += ", O_DIRECT writes";
  else if (direct_ && direct_->memory_backed()) text += ", page-cache writes: memory-backed file system";
  else if (direct_) text += ", page-cache writes: the file system refused O_DIRECT";
  if (state_ == State::resumed)
    text += ", resuming: " + std::to_string(units_done()) + " of " + std::to_string(unit_count()) + " " +
            axis_name(spec_.chunk_axis) + "s already done";
  return text + ")";
}

ChecksumOutput::ChecksumOutput(std::array<Axis, 3> axes, std::int64_t dates, std::int64_t ids, std::int64_t nums)
    : axes_(axes), dates_(dates), ids_(ids), nums_(nums), sums_(dates, 0.0), bits_(dates, 0) {}

namespace {

// Float sum (four accumulators, so the loop vectorises) and wrapping uint64
// sum of the bit patterns of v[0..n).
void sum_block(const double* v, std::int64_t n, double& sum, std::uint64_t& bits) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::uint64_t b[4] = {0, 0, 0, 0};
  std::int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    for (int u = 0; u < 4; ++u) {
      std::uint64_t x;
      std::memcpy(&x, v + j + u, sizeof x);
      s[u] += v[j + u];
      b[u] += x;
    }
  for (; j < n; ++j) {
    std::uint64_t x;
    std::memcpy(&x, v + j, sizeof x);
    s[0] += v[j];
    b[0] += x;
  }
  sum += (s[0] + s[1]) + (s[2] + s[3]);
  bits += (b[0] + b[1]) + (b[2] + b[3]);
}

}  // namespace

void ChecksumOutput::write_slab(const Slab& slab, const double* buffer, const InputSums&) {
  const auto count = discount_box({dates_, ids_, nums_}, axes_, slab.dates, slab.ids).count;
  const int date_pos = static_cast<int>(std::find(axes_.begin(), axes_.end(), Axis::date) - axes_.begin());
  // Pieces split over threads, each with its own per-date partials, merged
  // in thread order: the same slab gives the same float sums.
  const unsigned parts = io_threads();
  std::vector<std::vector<double>> part_sums(parts, std::vector<double>(sums_.size(), 0.0));
  std::vector<std::vector<std::uint64_t>> part_bits(parts, std::vector<std::uint64_t>(bits_.size(), 0));
  if (date_pos == 0) {
    // Date outermost: each date of the slab is one contiguous block.
    const std::int64_t block = count[1] * count[2];
    host_parallel(count[0] * block, parts, [&](std::int64_t begin, std::int64_t end, unsigned part) {
      while (begin < end) {
        const std::int64_t date = begin / block;
        const std::int64_t stop = std::min(end, (date + 1) * block);
        const auto d = static_cast<std::size_t>(slab.dates.begin + date);
        sum_block(buffer + begin, stop - begin, part_sums[part][d], part_bits[part][d]);
        begin = stop;
      }
    });
  } else {
    const std::int64_t rows = count[0] * count[1];
    host_parallel(rows, parts, [&](std::int64_t begin, std::int64_t end, unsigned part) {
      auto& sums = part_sums[part];
      auto& bits = part_bits[part];
      for (std::int64_t row = begin; row < end; ++row) {
        const double* values = buffer + row * count[2];
        if (date_pos == 2) {
          for (std::int64_t c = 0; c < count[2]; ++c) {
            std::uint64_t b;
            std::memcpy(&b, values + c, sizeof b);
            sums[static_cast<std::size_t>(slab.dates.begin + c)] += values[c];
            bits[static_cast<std::size_t>(slab.dates.begin + c)] += b;
          }
        } else {
          const auto d = static_cast<std::size_t>(slab.dates.begin + row % count[1]);
          sum_block(values, count[2], sums[d], bits[d]);
        }
      }
    });
  }
  for (unsigned p = 0; p < parts; ++p)
    for (std::size_t d = 0; d < sums_.size(); ++d) {
      sums_[d] += part_sums[p][d];
      bits_[d] += part_bits[p][d];
    }
}

void ChecksumOutput::combine_ranks() {
  ranks::sum(sums_);
  ranks::sum(bits_);
}

std::uint64_t ChecksumOutput::global_bits() const {
  std::uint64_t total = 0;
  for (auto b : bits_) total += b;
  return total;
}

}  // namespace discount
