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
#include "io/records/checksum.hpp"
#include "io/output/identity.hpp"
#include "io/input/input.hpp"
#include "io/output/output_mpio.hpp"
#include "io/records/output_parts.hpp"
#include "io/compress/part_encoder.hpp"
#include "io/records/output_record.hpp"
#include "io/posix/posix_io.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/records/run_table.hpp"
#include "io/posix/slab_write.hpp"

namespace discount {

namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// output.dtype float32: rounded once from the float64 product, packed in
// place (the pipeline's buffer is free again after write_slab); float64 as it is.
const void* stored_values(const OutputSpec& spec, const Slab& slab, const double* values) {
  if (spec.dtype != OutputType::float32) return values;
  Overflow overflow;
  const void* narrow = narrow_in_place(const_cast<double*>(values), static_cast<std::size_t>(slab.elements()),
                                       spec.check_finite ? &overflow : nullptr);
  if (overflow.index >= 0) throw_overflow(spec, slab.dates, slab.ids, overflow.index, overflow.value);
  return narrow;
}

// The checksum of a slab's stored values (io/records/checksum.hpp), whole or
// of elements [first, last) of its box.
std::uint64_t stored_sum(OutputType dtype, const FileBox& box, const void* buffer) {
  return dtype == OutputType::float32
             ? box_sum(static_cast<const float*>(buffer), box.dims, box.start, box.count, SumKey::output)
             : box_sum(static_cast<const double*>(buffer), box.dims, box.start, box.count, SumKey::output);
}
std::uint64_t stored_piece_sum(OutputType dtype, const FileBox& box, const void* buffer, std::int64_t first,
                               std::int64_t last) {
  return dtype == OutputType::float32 ? box_piece_sum(static_cast<const float*>(buffer) + first, box.dims, box.start,
                                                      box.count, first, last, SumKey::output)
                                      : box_piece_sum(static_cast<const double*>(buffer) + first, box.dims, box.start,
                                                      box.count, first, last, SumKey::output);
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

FileOutput::FileOutput(const OutputSpec& spec)
    : spec_(spec),
      existing_(spec.existing),
      record_(spec_, partial_path()),
      parts_(spec_, partial_path()),
      run_start_utc_(utc_now()) {
  check_compression_available(spec.compression);
  if (spec.attach) {
    if (!try_resume())
      throw io_error("cannot open '" + partial_path() +
                     "' prepared by rank 0 (is the directory shared by every rank?)");
    start_writing();
    return;
  }
  check_output_folder();
  if (spec_.owner) lock_ = take_output_lock(lock_path(), partial_path());
  if (!existing_) existing_ = std::make_shared<const ExistingOutput>(inspect_output(spec.path));
  if (finished_is_current()) {
    state_ = State::already_complete;
    return;
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
  // Part folders of this output that neither the finished output nor this
  // run names go, under the lock (PartSet::remove_stale).
  if (spec_.owner) parts_.remove_stale(existing_->finished.parts_folder);
  start_writing();
}

// The output's folder exists (made when missing) and is writable.
void FileOutput::check_output_folder() const {
  const std::string dir = dir_of(spec_.path);
  struct stat st {};
  // A missing folder is created (mkdir -p, modes from the umask); the checks below then hold for it.
  if (const std::string why = make_folders(dir); !why.empty())
    throw create_error("output.file '" + spec_.path + "': its folder cannot be created (" + why +
                       "); create it by hand or choose another output.file");
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw create_error("output.file '" + spec_.path + "': directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw create_error("output.file '" + spec_.path + "': directory '" + dir + "' is not writable");
}

// An existing output file: true when it is this job's, finished and whole
// (nothing to do); refused when it may not be replaced.
bool FileOutput::finished_is_current() {
  struct stat out_st {};
  if (::stat(spec_.path.c_str(), &out_st) != 0) return false;
  if (!S_ISREG(out_st.st_mode)) throw create_error("output.file '" + spec_.path + "' exists and is not a regular file");
  struct stat in_st {};
  if (!spec_.input_file.empty() && ::stat(spec_.input_file.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
      in_st.st_ino == out_st.st_ino)
    throw create_error("output.file '" + spec_.path + "' is the input file; inputs are never overwritten");
  if (spec_.overwrite) return false;
  if (existing_->finished.fingerprint == spec_.fingerprint && !spec_.restart) {
    const std::string& folder = existing_->finished.parts_folder;
    const std::string dir = dir_of(spec_.path);
    if (!folder.empty() && !is_dir(dir + "/" + folder))
      throw create_error("output.file '" + spec_.path + "': its part folder '" + dir + "/" + folder +
                         "' is missing; set output.overwrite: true to compute it again");
    check_finished_parts();
    check_finished_inputs();
    return true;
  }
  throw create_error("output.file '" + spec_.path +
                     "' already exists; set output.overwrite: true to replace it, or choose another file");
}

// The partial open for the record's writes, the data files for the slabs',
// and this rank's share of the record's empty slots.
void FileOutput::start_writing() {
  record_.open();
  if (parts_.size() == 0) parts_.open(record_.layout().data_offset);
  if (spec_.direct_io) parts_.open_direct(writer_threads());
  record_.share_free_slots();
  record_.set_hooks([this] { parts_.sync_dirty(); },
                    [this] {
                      write_run_record(record_.fd());
                      stream_durable();
                    });
  start_streaming();
}

FileOutput::~FileOutput() = default;

std::int64_t FileOutput::units_done() const { return record_.units_done(); }

std::int64_t FileOutput::unit_count() const { return spec_.chunk_axis == Axis::date ? spec_.dates : spec_.ids; }

std::uint64_t FileOutput::piece_bytes() const {
  return spec_.read_piece_bytes > 0 ? spec_.read_piece_bytes : std::uint64_t{16} << 20;
}

std::pair<std::int64_t, std::int64_t> FileOutput::units_of(const Slab& slab) const {
  const Range r = spec_.chunk_axis == Axis::date ? slab.dates : slab.ids;
  return {r.begin, r.end};
}

bool FileOutput::slab_done(const Slab& slab) const {
  if (state_ == State::already_complete) return true;
  const auto [b, e] = units_of(slab);
  return record_.covers(b, e);
}

void FileOutput::open_collective() {
  // Every rank has opened the file by now and read the same run number:
  // the owner records the run's start.
  if (state_ == State::already_complete) return;
  write_run_record(record_.fd());
  if (spec_.ranks <= 1 || !spec_.mpi_comm || parts_.split() || parts_.size() == 0) return;
  collective_ = open_mpio_dataset(spec_.mpi_comm, spec_.mpi_hints, partial_path(), spec_.dataset, spec_.dtype);
  parts_.file(0).writer = collective_.get();
}

void FileOutput::close_collective() {
  stamp_run_record();
  if (!collective_) return;
  if (parts_.size() > 0) parts_.file(0).writer = nullptr;
  const auto writer = std::move(collective_);
  writer->close();
}

void FileOutput::write_slab(const Slab& slab, const double* values, const InputSums& input) {
  const FileBox box = output_box(spec_, slab.dates, slab.ids);
  const void* buffer = stored_values(spec_, slab, values);
  const std::size_t element = stored_bytes(spec_.dtype);
  const auto [b, e] = units_of(slab);
  // The checksum of what is written: piece by piece as each is written, while
  // it is in cache, when the slab goes whole to one file that writes through
  // the page cache; else on a helper thread while the write goes on.
  const std::size_t f = parts_.file_of(b);
  const bool fused = f == parts_.file_of(e - 1) && parts_.file(f).hooks_while_writing();
  std::atomic<std::uint64_t> fused_sum{0};
  PieceHook hook;
  if (fused)
    hook = [&](std::uint64_t offset, std::uint64_t bytes) {
      const auto first = static_cast<std::int64_t>(offset / element);
      fused_sum.fetch_add(
          stored_piece_sum(spec_.dtype, box, buffer, first, first + static_cast<std::int64_t>(bytes / element)),
          std::memory_order_relaxed);
    };
  std::future<std::uint64_t> out_sum;
  if (!fused) out_sum = std::async(std::launch::async, [&] { return stored_sum(spec_.dtype, box, buffer); });
  parts_.write(box, b, e, buffer, element, hook);
  record_written(b, e, fused ? fused_sum.load() : out_sum.get(), input);
}

void FileOutput::record_written(std::int64_t b, std::int64_t e, std::uint64_t out_sum, const InputSums& input) {
  parts_.write_back(b, e);
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
  stream_written(b, e);
  record_.add(done);
}

int FileOutput::writer_threads() const {
  const int files = static_cast<int>(parts_.size());
  if (files <= 1) return 1;
  return spec_.writers > 0 ? std::min(files, spec_.writers)
                           : split_writers(files, std::max(2u, std::thread::hardware_concurrency()));
}

std::vector<int> FileOutput::write_order(const std::vector<int>& pending) const { return parts_.write_order(pending); }

void FileOutput::checkpoint() {
  if (state_ != State::already_complete) record_.checkpoint();
  // A run that stops (a signal, an error): the parts not yet renamed stay
  // contiguous for the resume, and no HDF5 call of the stream's runs beside
  // the main thread's from here on.
  stream_.parts.reset();
}

void FileOutput::flush() {
  if (state_ == State::already_complete || record_.fd() < 0) return;
  record_.checkpoint();  // the compression stream, if any, goes on to its end
  parts_.sync_and_close();
  record_.sync_and_close();
}

void FileOutput::check_all_done() const { record_.check_all_done(); }

void FileOutput::finish_share(int rank, int ranks) {
  if (state_ == State::already_complete || !spec_.compression.enabled() || !parts_.split()) return;
  flush();
  check_all_done();
  finish_streaming();
  compress_parts(rank, ranks);
}

void FileOutput::publish() {
  if (state_ == State::already_complete) return;
  flush();
  const std::string partial = partial_path();
  {
    check_all_done();
    // Parts a rank left (none when every rank ran finish_share).
    if (spec_.compression.enabled() && parts_.split()) {
      finish_streaming();
      compress_parts(0, 1);
    }
    h5::Id file = h5::file(H5Fopen(partial.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    if (!file) throw io_error("cannot open '" + partial + "' to finish it");
    // The provenance's end time: the only metadata change after creation,
    // made once all data and progress are durable.
    h5::Id group = h5::group(H5Gopen2(file.get(), kOutputGroup, H5P_DEFAULT));
    if (group) h5::write_string_attribute(group.get(), "end_time", utc_now());
    // Each part's identity, so that a rerun finds a part swapped or replaced.
    if (group && parts_.split()) h5::write_string_attribute(group.get(), "part_ids", parts_.identities());
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
  if (!old.empty() && old.find('/') == std::string::npos && old != base_name(parts_.folder()) &&
      is_parts_folder_of(old, base_name(spec_.path)))
    remove_part_set_or_warn(dir_of(spec_.path) + "/" + old, spec_.path);
}

void FileOutput::compress_parts(int rank, int ranks) {
  compression_.codec = describe_compression(spec_.compression);
  std::vector<PartToCompress> share;
  for (std::size_t f = 0; f < parts_.parts(); ++f) {
    if (static_cast<int>(f % static_cast<std::size_t>(ranks)) != rank) continue;
    const std::string path = parts_.part_path(f);
    if (part_is_compressed(path)) continue;
    // This process's handles on the contiguous part go first: the part is
    // replaced by its compressed self.
    parts_.release(f);
    share.push_back({path, parts_.part_dims(f)});
  }
  if (!share.empty()) compression_.add(discount::compress_parts(share, spec_.dtype, spec_.compression));
}

void FileOutput::discard() {
  stream_.parts.reset();  // its threads end, its temporary files go
  parts_.close();
  record_.close();
  ::unlink(partial_path().c_str());
  parts_.remove();
}

std::string FileOutput::describe() const {
  std::string text = spec_.path + " (dataset '" + spec_.dataset + "'";
  const DirectWriter* direct = parts_.size() == 0 ? nullptr : parts_.file(0).direct.get();
  if (parts_.split())
    text += ", split over " + std::to_string(parts_.parts()) + " part file(s) in '" + parts_.folder() + "'" +
            (spec_.parts > 0 && !spec_.parts_auto
                 ? ""
                 : " (output.parts: auto, " +
                       std::string(spec_.parts_per_core ? kPartsPerCoreRule
                                                        : auto_parts_rule(memory_backed(parts_.folder()))) +
                       ")") +
            ", " + std::to_string(writer_threads()) + " writer(s)";
  if (collective_)
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
