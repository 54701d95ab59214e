#include "io/output/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <iostream>
#include <thread>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/test_hooks.hpp"
#include "io/posix/box.hpp"
#include "io/posix/make_folders.hpp"
#include "io/output/checksum.hpp"
#include "io/output/identity.hpp"
#include "io/input/input.hpp"
#include "io/output/output_mpio.hpp"
#include "io/output/output_parts.hpp"
#include "io/output/output_record.hpp"
#include "io/posix/posix_io.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/output/run_table.hpp"
#include "io/posix/slab_write.hpp"

namespace discount {

namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

void throw_overflow(const OutputSpec& spec, Range dates, Range ids, std::int64_t index, double value) {
  // The element's place: the slab's box in the output's axis order, row-major.
  const FileBox box = output_box(spec, dates, ids);
  std::int64_t at[3] = {};
  for (int j = 2; j >= 0; --j) {
    at[j] = box.start[j] + index % box.count[j];
    index /= box.count[j];
  }
  std::string where;
  for (const Axis axis : {Axis::date, Axis::id, Axis::num}) {
    const auto j = std::find(spec.axes.begin(), spec.axes.end(), axis) - spec.axes.begin();
    where += "[" + std::to_string(at[j]) + "]";
  }
  char text[40];
  std::snprintf(text, sizeof text, "%.6g", value);
  throw data_error("output.dtype float32: cv[date][id][num] " + where + " = " + text + " of '" + spec.path +
                   "' overflows float32 to inf (input.nonfinite: error; set output.dtype: float64, or " +
                   "input.nonfinite: propagate to store inf)");
}

FileBox output_box(const OutputSpec& spec, Range dates, Range ids) {
  return discount_box({spec.dates, spec.ids, spec.nums}, spec.axes, dates, ids);
}

FileOutput::FileOutput(const OutputSpec& spec) : spec_(spec), existing_(spec.existing), run_start_utc_(utc_now()) {
  check_compression_available(spec.compression);
  if (spec.attach) {
    if (!try_resume())
      throw io_error("cannot open '" + partial_path() +
                     "' prepared by rank 0 (is the directory shared by every rank?)");
    open_files();
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
  if (spec_.owner) lock_ = take_output_lock(lock_path(), partial_path());
  if (!existing_) existing_ = std::make_shared<const ExistingOutput>(inspect_output(spec.path));
  struct stat out_st {};
  if (::stat(spec.path.c_str(), &out_st) == 0) {
    if (!S_ISREG(out_st.st_mode))
      throw create_error("output.file '" + spec.path + "' exists and is not a regular file");
    struct stat in_st {};
    if (!spec.input_file.empty() && ::stat(spec.input_file.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
        in_st.st_ino == out_st.st_ino)
      throw create_error("output.file '" + spec.path + "' is the input file; inputs are never overwritten");
    if (!spec.overwrite) {
      if (existing_->finished.fingerprint == spec.fingerprint && !spec.restart) {
        const std::string& folder = existing_->finished.parts_folder;
        if (!folder.empty() && !is_dir(dir + "/" + folder))
          throw create_error("output.file '" + spec.path + "': its part folder '" + dir + "/" + folder +
                             "' is missing; set output.overwrite: true to compute it again");
        check_finished_parts();
        check_finished_inputs();
        state_ = State::already_complete;
        return;
      }
      throw create_error("output.file '" + spec.path +
                         "' already exists; set output.overwrite: true to replace it, or choose another file");
    }
  }
  const std::string partial = partial_path();
  if (existing_->partial.exists) {
    if (spec.restart) {
      if (::unlink(partial.c_str()) != 0 && errno != ENOENT)
        throw create_error("cannot remove '" + partial + "': " + std::strerror(errno));
    } else if (!try_resume()) {
      throw create_error("'" + partial + "' " + resume_refusal() + "; rerun with --restart to discard it");
    }
  }
  if (state_ != State::resumed) create();
  remove_stale_parts(parts_folder_);
  open_files();
  share_free_slots();
}

FileOutput::~FileOutput() {
  if (fd_ >= 0) ::close(fd_);
  // mpio_data_ and mpio_file_ (set only when a run ends without
  // close_collective) close by themselves, dataset first; then the lock goes.
}

// Part folders of this output that neither the finished output nor this run
// names: left by a kill between a part set's creation and its master's
// rename, or by an overwrite killed before it removed the set it replaced.
// Only a folder whose record names this output and the folder itself is
// removed, and only the files it lists (io/posix/part_record.hpp); other folders
// named like ours are left alone with a warning. Under the lock.
void FileOutput::remove_stale_parts(const std::string& ours) const {
  if (!spec_.owner) return;
  const std::string dir = dir_of(spec_.path), base = base_name(spec_.path);
  const std::string keep = existing_ ? existing_->finished.parts_folder : std::string();
  std::vector<std::string> stale;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (!is_parts_folder_of(name, base) || name == keep || name == base_name(ours)) continue;
      stale.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  std::sort(stale.begin(), stale.end());
  for (const auto& path : stale) remove_part_set_or_warn(path, spec_.path);
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
// table once the owner has checked it, and takes every ranks-th empty slot.
void FileOutput::share_free_slots() {
  const auto free = table_.free_slots();
  free_slots_.clear();
  scarce_at_ = table_.coverage().size() + 2;
  for (std::size_t j = static_cast<std::size_t>(spec_.rank); j < free.size();
       j += static_cast<std::size_t>(spec_.ranks))
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
  // the owner records the run's start.
  if (state_ != State::already_complete) write_run_record(fd_);
#ifdef DISCOUNT_HDF5_PARALLEL
  if (spec_.ranks <= 1 || !spec_.mpi_comm || !parts_folder_.empty() || state_ == State::already_complete) return;
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  h5::QuietErrors quiet;
  h5::Id fapl = mpio_file_access(spec_.mpi_comm, spec_.mpi_hints);
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

void FileOutput::write_slab(const Slab& slab, const double* values, const InputSums& input) {
  const FileBox box = output_box(spec_, slab.dates, slab.ids);
  // output.dtype float32: rounded once from the float64 product, packed in
  // place (the pipeline's buffer is free again after this call).
  const void* buffer = values;
  if (spec_.dtype == OutputType::float32) {
    Overflow overflow;
    buffer = narrow_in_place(const_cast<double*>(values), static_cast<std::size_t>(slab.elements()),
                             spec_.check_finite ? &overflow : nullptr);
    if (overflow.index >= 0) throw_overflow(spec_, slab.dates, slab.ids, overflow.index, overflow.value);
  }
  const std::size_t element = stored_bytes(spec_.dtype);
  const auto [b, e] = units_of(slab);
  // The checksum of what is written: piece by piece as each is written, while
  // it is in cache, when the slab goes whole to one file written through the
  // page cache; else on a helper thread while the write goes on.
  bool mpio = false;
#ifdef DISCOUNT_HDF5_PARALLEL
  mpio = static_cast<bool>(mpio_data_);
#endif
  const bool one_file = !mpio && file_of(b) == file_of(e - 1);
  const DirectWriter* direct = one_file ? files_[file_of(b)]->direct.get() : nullptr;
  const bool fused = one_file && (!direct || direct->hooks_while_writing());
  std::atomic<std::uint64_t> fused_sum{0};
  PieceHook hook;
  if (fused)
    hook = [&](std::uint64_t offset, std::uint64_t bytes) {
      const auto first = static_cast<std::int64_t>(offset / element);
      const auto last = first + static_cast<std::int64_t>(bytes / element);
      fused_sum.fetch_add(
          spec_.dtype == OutputType::float32
              ? box_piece_sum(static_cast<const float*>(buffer) + first, box.dims, box.start, box.count, first, last,
                              SumKey::output)
              : box_piece_sum(values + first, box.dims, box.start, box.count, first, last, SumKey::output),
          std::memory_order_relaxed);
    };
  std::future<std::uint64_t> out_sum;
  if (!fused)
    out_sum = std::async(std::launch::async, [&] {
      return spec_.dtype == OutputType::float32
                 ? box_sum(static_cast<const float*>(buffer), box.dims, box.start, box.count, SumKey::output)
                 : box_sum(values, box.dims, box.start, box.count, SumKey::output);
    });
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
        H5Dwrite(mpio_data_.get(), spec_.dtype == OutputType::float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE,
                 mem_space.get(), file_space.get(), dxpl.get(), buffer) < 0)
      throw io_error("writing '" + partial_path() + "' through MPI-IO failed");
    files_[0]->dirty = true;
  } else
#endif
  {
    const int k = chunk_axis_position();
    const auto* bytes = static_cast<const unsigned char*>(buffer);
    std::vector<unsigned char> piece;
    for (std::size_t f = file_of(b); f < files_.size() && files_[f]->units.begin < e; ++f) {
      DataFile& file = *files_[f];
      const std::int64_t from = std::max(b, file.units.begin), to = std::min(e, file.units.end);
      auto start = box.start, count = box.count;
      start[k] = from - file.units.begin;
      count[k] = to - from;
      const void* data = buffer;
      if (from != b || to != e) {
        // A slab across a part's edge (a resume whose plan cut slabs
        // differently): this part's share, packed on its own.
        piece.resize(static_cast<std::size_t>(count[0] * count[1] * count[2]) * element);
        std::array<std::int64_t, 3> offset{0, 0, 0};
        offset[k] = from - b;
        for (std::int64_t i = 0; i < count[0]; ++i)
          for (std::int64_t j = 0; j < count[1]; ++j)
            std::memcpy(piece.data() + static_cast<std::size_t>((i * count[1] + j) * count[2]) * element,
                        bytes + static_cast<std::size_t>(
                                    ((i + offset[0]) * box.count[1] + j + offset[1]) * box.count[2] + offset[2]) *
                                    element,
                        static_cast<std::size_t>(count[2]) * element);
        data = piece.data();
      }
      write_box(file.fd.get(), file.direct.get(), file.offset, file.dims, start, count, data, element,
                "writing '" + file.path + "'", hook);
      file.dirty = true;
    }
  }
  record_written(b, e, fused ? fused_sum.load() : out_sum.get(), input);
}

void FileOutput::record_written(std::int64_t b, std::int64_t e, std::uint64_t out_sum, const InputSums& input) {
  // Page-cache writes go to the device from here on, while the job streams:
  // the kernel would start only past its dirty threshold (a tenth of memory),
  // which leaves a job under it the whole write-out at its final fdatasync.
  for (std::size_t f = file_of(b); !mpio_data_ && f < files_.size() && files_[f]->units.begin < e; ++f)
    if (spec_.writeback && !(files_[f]->direct && files_[f]->direct->active())) start_writeback(files_[f]->fd.get());
  DoneRange done;
  done.begin = b;
  done.end = e;
  done.run = run_;
  done.out_sum = out_sum;
  if (input.known) {
    done.flags = kHasInputSums;
    done.in_disc = input.disc;
    done.in_mult = input.mult;
  }
  std::lock_guard<std::mutex> lock(record_mutex_);
  unrecorded_.push_back(done);
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_checkpoint_).count() >= spec_.checkpoint_seconds) checkpoint_locked();
}

void FileOutput::checkpoint() {
  std::lock_guard<std::mutex> lock(record_mutex_);
  checkpoint_locked();
}

void FileOutput::checkpoint_locked() {
  last_checkpoint_ = std::chrono::steady_clock::now();
  if (unrecorded_.empty() || state_ == State::already_complete) return;
  // Data first, durable; only then the entries that vouch for it (each one
  // valid only once whole: io/output/unit_record.hpp). A writer marks its file dirty
  // before it queues its range here, so every range below is covered.
  // Entries stay small (a failed checksum redoes one), until this rank's
  // empty slots run short: then a range that continues one it recorded in
  // this run extends it in place, so the run needs at most one new entry per
  // stretch of slabs still to do.
  for (auto& f : files_)
    if (f->dirty.exchange(false) && ::fdatasync(f->fd.get()) != 0)
      throw io_error("flushing '" + f->path + "': " + std::strerror(errno));
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
        throw io_error("the progress record of '" + partial_path() + "' is full (" + std::to_string(table_.capacity()) +
                       " ranges); run the same command again to resume");
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
  for (auto& f : files_) {
    if (f->fd.get() >= 0 && ::fsync(f->fd.get()) != 0)
      throw io_error("flushing '" + f->path + "': " + std::strerror(errno));
    if (f->direct) f->direct->close();
  }
  if (::fsync(fd_) != 0) throw io_error("flushing '" + partial_path() + "': " + std::strerror(errno));
  files_.clear();
  ::close(fd_);
  fd_ = -1;
}

void FileOutput::check_all_done() const {
  // Every rank's done ranges, as the file holds them: a unit missing here
  // is a bug in the slab distribution, and the result stays partial.
  const std::string partial = partial_path();
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
}

void FileOutput::finish_share(int rank, int ranks) {
  if (state_ == State::already_complete || !spec_.compression.enabled() || parts_folder_.empty()) return;
  flush();
  check_all_done();
  compress_parts(rank, ranks);
}

void FileOutput::publish() {
  if (state_ == State::already_complete) return;
  flush();
  const std::string partial = partial_path();
  {
    check_all_done();
    // Parts a rank left (none when every rank ran finish_share).
    if (spec_.compression.enabled() && !parts_folder_.empty()) compress_parts(0, 1);
    h5::Id file = h5::file(H5Fopen(partial.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    if (!file) throw io_error("cannot open '" + partial + "' to finish it");
    // The provenance's end time: the only metadata change after creation,
    // made once all data and progress are durable.
    h5::Id group = h5::group(H5Gopen2(file.get(), kOutputGroup, H5P_DEFAULT));
    if (group) h5::write_string_attribute(group.get(), "end_time", utc_now());
    // Each part's identity, so that a rerun finds a part swapped or replaced.
    if (group && !parts_folder_.empty()) h5::write_string_attribute(group.get(), "part_ids", part_identities());
    group.reset();
    if (!file.close()) throw io_error("finishing '" + partial + "': HDF5 could not close the file");
  }
  int fd = ::open(partial.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  TestHold(spec_.test_hold).before_publish();  // tests only (common/test_hooks.hpp)
  if (::rename(partial.c_str(), spec_.path.c_str()) != 0)
    throw io_error("renaming '" + partial + "' to '" + spec_.path + "': " + std::strerror(errno));
  published_ = true;
  fsync_dir(dir_of(spec_.path));
  // The set this output replaced goes only now that the new one is in place.
  const std::string old = existing_ ? existing_->finished.parts_folder : std::string();
  if (!old.empty() && old.find('/') == std::string::npos && old != base_name(parts_folder_) &&
      is_parts_folder_of(old, base_name(spec_.path)))
    remove_part_set_or_warn(dir_of(spec_.path) + "/" + old, spec_.path);
}

void FileOutput::compress_parts(int rank, int ranks) {
  compression_.codec = describe_compression(spec_.compression);
  for (std::size_t f = 0; f + 1 < bounds_.size(); ++f) {
    if (static_cast<int>(f % static_cast<std::size_t>(ranks)) != rank) continue;
    const std::string path = parts_folder_ + "/" + part_file_name(f);
    if (part_is_compressed(path)) continue;
    // This process's handles on the contiguous part go first: the part is
    // replaced by its compressed self.
    if (f < files_.size()) {
      files_[f]->direct.reset();
      files_[f]->fd.reset();
    }
    compression_.add(compress_part(path, part_dims(f), spec_.dtype, spec_.compression));
  }
}

void FileOutput::discard() {
  files_.clear();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(partial_path().c_str());
  if (!parts_folder_.empty()) remove_part_set_or_warn(parts_folder_, spec_.path);
}

std::string FileOutput::describe() const {
  std::string text = spec_.path + " (dataset '" + spec_.dataset + "'";
  const DirectWriter* direct = files_.empty() ? nullptr : files_[0]->direct.get();
  if (!parts_folder_.empty())
    text += ", split over " + std::to_string(bounds_.size() - 1) + " part file(s) in '" + parts_folder_ + "'" +
            (spec_.parts > 0 && !spec_.parts_auto
                 ? ""
                 : " (output.parts: auto, " + std::string(auto_parts_rule(memory_backed(parts_folder_))) + ")") +
            ", " + std::to_string(writer_threads()) + " writer(s)";
  if (mpio_data_)
    text += ", written through MPI-IO (parallel HDF5) by " + std::to_string(spec_.ranks) + " ranks";
  else if (direct && direct->active())
    text += ", O_DIRECT writes";
  else if (direct && direct->memory_backed())
    text += ", page-cache writes: memory-backed file system";
  else if (direct)
    text += ", page-cache writes: the file system refused O_DIRECT";
  else if (spec_.pieces)
    text += ", page-cache writes of ~1 MiB pieces (memory.staging: none)";
  else if (!spec_.direct_io)
    text += ", page-cache writes: output.direct_io is false";
  if (state_ == State::resumed)
    text += ", resuming: " + std::to_string(units_done()) + " of " + std::to_string(unit_count()) + " " +
            axis_name(spec_.chunk_axis) + "s already done";
  return text + ")";
}

}  // namespace discount
