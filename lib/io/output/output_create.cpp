// FileOutput's creation of a fresh output: the one place where the output's
// HDF5 structure is made (the master `<out>.partial.tmp`, and with
// output.layout: split its part folder), renamed into place as `<out>.partial`
// once whole. Attributes or scales that belong on the result dataset go in
// create_master, on the master's dataset.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/error.hpp"
#include "io/posix/box.hpp"
#include "io/input/input.hpp"
#include "io/output/output.hpp"
#include "io/output/output_mpio.hpp"
#include "io/records/output_parts.hpp"
#include "io/records/run_table.hpp"
#include "io/output/output_coords.hpp"
#include "io/hdf5/stored_type.hpp"

namespace discount {

void FileOutput::create() {
  const std::string tmp = spec_.path + ".partial.tmp";
  const std::string inner = spec_.dataset.substr(
      spec_.dataset.find_first_not_of('/') == std::string::npos ? 0 : spec_.dataset.find_first_not_of('/'));
  if (inner.empty() || inner == kOutputGroup || inner.rfind(std::string(kOutputGroup) + "/", 0) == 0)
    throw config_error("output.dataset '" + spec_.dataset + "': the group '" + kOutputGroup +
                       "' holds the job's progress record; choose another path");
  ::unlink(tmp.c_str());  // a leftover from a kill during creation holds nothing
  const auto dims =
      discount_box({spec_.dates, spec_.ids, spec_.nums}, spec_.axes, {0, spec_.dates}, {0, spec_.ids}).dims;
  const std::size_t capacity = table_capacity(spec_.slabs);
  const std::uint64_t data_bytes = static_cast<std::uint64_t>(dims[0] * dims[1] * dims[2]) * stored_bytes(spec_.dtype);
  check_create_room(data_bytes + (capacity + 1) * kEntryBytes + kRunTableBytes + (std::uint64_t{1} << 20));
  record_.start_empty(capacity);
  parts_.use_single();
  // Split: the parts first, durable, in a folder no master names yet.
  const std::string folder_name = spec_.layout == OutputLayout::split ? parts_.create_split(data_bytes) : "";
  try {
    create_master(tmp, data_bytes, folder_name);
  } catch (...) {
    parts_.remove();
    throw;
  }
  if (::rename(tmp.c_str(), partial_path().c_str()) != 0)
    throw create_error("cannot rename '" + tmp + "': " + std::strerror(errno));
  fsync_dir(dir_of(spec_.path));
  state_ = State::fresh;
}

// A file-size limit below the output's size, or too little free space, is
// reported before anything is written (HDF5 cannot close such a file cleanly).
void FileOutput::check_create_room(std::uint64_t needed) const {
  struct rlimit limit {};
  if (spec_.layout == OutputLayout::single && ::getrlimit(RLIMIT_FSIZE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed)
    throw io_error("file size limit exceeded (ulimit -f): output '" + spec_.path + "' needs " + format_bytes(needed) +
                   ", the limit is " + format_bytes(limit.rlim_cur));
  struct statvfs fs {};
  if (::statvfs(dir_of(spec_.path).c_str(), &fs) == 0) {
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (free_bytes < needed)
      throw io_error("no space left on device: output '" + spec_.path + "' needs " + format_bytes(needed) + ", " +
                     format_bytes(free_bytes) + " free");
  }
}

// The master: the group with the job's identity, the record, the run table
// and the result dataset (contiguous here, or virtual over the parts).
void FileOutput::create_master(const std::string& tmp, std::uint64_t data_bytes, const std::string& folder_name) {
  {
    h5::QuietErrors quiet;
    // Under MPI with output.mpi_hints, the single layout's file is created
    // through MPI-IO with them (striping hints apply only at creation).
    h5::Id fapl = spec_.layout != OutputLayout::split && spec_.mpi_comm && !spec_.mpi_hints.empty()
                      ? mpio_self_access(spec_.mpi_hints)
                      : h5::plist(H5Pcreate(H5P_FILE_ACCESS));
    // HDF5 1.8's object headers at least: an input attribute over 64 KiB is
    // copied into dense attribute storage instead of failing.
    h5::check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
    h5::Id file = h5::file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!file) throw create_error("cannot create '" + tmp + "': " + std::strerror(errno));
    try {
      write_master_structure(file.get(), folder_name);
    } catch (const Error& e) {
      file.reset();
      ::unlink(tmp.c_str());
      throw io_error("creating '" + tmp + "': " + e.what());
    }
    // Closing writes the metadata and sets the file's size; a full disk or a
    // file-size limit shows here.
    if (!file.close()) {
      ::unlink(tmp.c_str());
      throw io_error("creating '" + tmp + "': " +
                     std::string(errno == EFBIG    ? "file size limit exceeded (ulimit -f)"
                                 : errno == ENOSPC ? "no space left on device"
                                                   : "HDF5 could not finish the file"));
    }
  }
  reserve_master(tmp, data_bytes);
}

// The master's objects in the file being created; io_error saying what failed.
void FileOutput::write_master_structure(hid_t file, const std::string& folder_name) {
  const auto dims =
      discount_box({spec_.dates, spec_.ids, spec_.nums}, spec_.axes, {0, spec_.dates}, {0, spec_.ids}).dims;
  h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
  if (spec_.layout == OutputLayout::split) {
    map_parts(dcpl.get(), dims, parts_.chunk_position(), parts_.bounds(), folder_name);
  } else {
    // Contiguous, allocated now, never filled: the data lives at one fixed
    // offset that positional writes address for the rest of the job.
    h5::check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
    h5::check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
    h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  }
  // output.dataset may be a path ("results/run1/cv"): its groups are made too.
  h5::Id lcpl = h5::plist(H5Pcreate(H5P_LINK_CREATE));
  h5::check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group");
  const hsize_t hdims[3] = {static_cast<hsize_t>(dims[0]), static_cast<hsize_t>(dims[1]),
                            static_cast<hsize_t>(dims[2])};
  h5::Id space = h5::dataspace(H5Screate_simple(3, hdims, nullptr));
  h5::Id group = h5::group(H5Gcreate2(file, kOutputGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!group) throw io_error("cannot create group");
  const hid_t stored = stored_hdf5_type(spec_.dtype);  // named first: nvcc and HDF5's type macros
  h5::Id data =
      h5::dataset(H5Dcreate2(file, spec_.dataset.c_str(), stored, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT));
  if (!data) throw io_error("cannot create dataset '" + spec_.dataset + "' " + h5::shape_string({hdims, hdims + 3}));
  if (!create_record(file, record_.table().capacity())) throw io_error("cannot create the progress record");
  runs_offset_ = create_run_table(file);
  if (runs_offset_ == 0) throw io_error("cannot create the run record");
  write_master_attributes(file, group.get(), data.get(), folder_name);
  const std::string damage = record_damage(file, spec_, UINT64_MAX, record_.layout());
  if (!damage.empty()) throw io_error(damage);
  run_ = 1;
}

// The job's identity and provenance on the group; the axes, scales and
// attributes netCDF readers look for on the result dataset.
void FileOutput::write_master_attributes(hid_t file, hid_t group, hid_t data, const std::string& folder_name) const {
  h5::write_string_attribute(group, "fingerprint", spec_.fingerprint);
  h5::write_string_attribute(group, "identity", spec_.identity);
  h5::write_string_attribute(group, "input_stat", spec_.input_stat);
  h5::write_string_attribute(group, "chunk_axis", axis_name(spec_.chunk_axis));
  h5::write_string_attribute(group, "provenance", spec_.provenance);
  h5::write_string_attribute(group, "start_time", utc_now());
  if (spec_.layout == OutputLayout::split) {
    h5::write_string_attribute(group, "parts_folder", folder_name);
    h5::write_string_attribute(group, "part_bounds", bounds_text(parts_.bounds()));
  }
  std::string axes =
      std::string(axis_name(spec_.axes[0])) + "," + axis_name(spec_.axes[1]) + "," + axis_name(spec_.axes[2]);
  h5::write_string_attribute(data, "axes", axes);
  // Dimension scales, coordinates and attributes for netCDF readers
  // (io/output/output_coords.hpp): on the master's dataset in a split layout.
  decorate_output(file, data, spec_.decor);
  write_provenance(group, spec_.decor);
}

// Reserves the single layout's blocks now so a full disk is reported before
// hours of work, and records the input file as this partial first sees it
// (a resume compares). A memory-backed file system would allocate (and
// zero) every page here, a second or more per 10 GB before the first read:
// there the free space is checked instead, and the writes take the pages as
// they go (a full tmpfs mid-run is an error there too, io/posix/posix_io.hpp).
// Parts reserved their own.
void FileOutput::reserve_master(const std::string& tmp, std::uint64_t data_bytes) {
  int fd = ::open(tmp.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw create_error("cannot reopen '" + tmp + "': " + std::strerror(errno));
  int rc = 0;
  if (spec_.layout == OutputLayout::split) {
  } else if (memory_backed(tmp)) {
    struct statvfs info {};
    if (::fstatvfs(fd, &info) == 0 &&
        static_cast<std::uint64_t>(info.f_bavail) * static_cast<std::uint64_t>(info.f_frsize) < data_bytes)
      rc = ENOSPC;
  } else {
    rc = ::posix_fallocate(fd, static_cast<off_t>(record_.layout().data_offset), static_cast<off_t>(data_bytes));
  }
  if (rc == ENOSPC || rc == EFBIG || rc == EDQUOT) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw io_error("output '" + spec_.path + "' needs " + format_bytes(data_bytes) + ": " +
                   (rc == ENOSPC  ? "no space left on device"
                    : rc == EFBIG ? "file size limit exceeded (ulimit -f)"
                                  : "disk quota exceeded"));
  }
  try {
    write_file_id(fd, record_.layout(), input_files_id(spec_), tmp);
  } catch (const Error&) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::fsync(fd);
  ::close(fd);
}

}  // namespace discount
