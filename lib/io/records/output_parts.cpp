#include "io/records/output_parts.hpp"

#include "io/hdf5/stored_type.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/vds_names.hpp"
#include "io/posix/part_record.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

std::vector<std::int64_t> part_bounds(const std::vector<Range>& slab_units, std::int64_t units, int parts) {
  const auto n = static_cast<std::int64_t>(slab_units.size());
  std::vector<std::int64_t> bounds{0};
  const std::int64_t count = std::max<std::int64_t>(1, std::min<std::int64_t>(parts, n));
  for (std::int64_t p = 1; p < count; ++p) bounds.push_back(slab_units[static_cast<std::size_t>(n * p / count)].begin);
  bounds.push_back(units);
  return bounds;
}

std::string bounds_text(const std::vector<std::int64_t>& bounds) {
  std::string text;
  for (std::size_t j = 0; j < bounds.size(); ++j) text += (j ? "," : "") + std::to_string(bounds[j]);
  return text;
}

std::vector<std::int64_t> parse_bounds(const std::string& text, std::int64_t units) {
  std::vector<std::int64_t> bounds;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') return {};
    if (!bounds.empty() && v <= bounds.back()) return {};
    bounds.push_back(v);
  }
  if (bounds.size() < 2 || bounds.front() != 0 || bounds.back() != units) return {};
  return bounds;
}

std::string part_file_name(std::size_t part) {
  char name[32];
  std::snprintf(name, sizeof name, "part-%05zu.h5", part);
  return name;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string new_parts_folder_name(const std::string& out_path) {
  // Time and a random draw: unique among this output's runs without a counter.
  std::random_device device;
  const auto now = static_cast<unsigned long long>(std::chrono::system_clock::now().time_since_epoch().count());
  char id[40];
  std::snprintf(id, sizeof id, "%llx-%08x", now & 0xffffffffffffull, static_cast<unsigned>(device()));
  return base_name(out_path) + ".parts-" + id;
}

bool is_parts_folder_of(const std::string& name, const std::string& out_base) {
  const std::string prefix = out_base + ".parts-";
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.find('/') == std::string::npos;
}

namespace {

hsize_t to_h(std::int64_t v) { return static_cast<hsize_t>(v); }

}  // namespace

std::uint64_t create_part_file(const std::string& path, const std::array<std::int64_t, 3>& dims, OutputType dtype) {
  std::uint64_t offset = 0;
  const std::uint64_t bytes = static_cast<std::uint64_t>(dims[0] * dims[1] * dims[2]) * stored_bytes(dtype);
  {
    h5::QuietErrors quiet;
    h5::Id file = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file) throw create_error("cannot create the part '" + path + "': " + std::strerror(errno));
    h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
    h5::check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
    h5::check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
    h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
    const hsize_t hdims[3] = {to_h(dims[0]), to_h(dims[1]), to_h(dims[2])};
    h5::Id space = h5::dataspace(H5Screate_simple(3, hdims, nullptr));
    const hid_t stored = stored_hdf5_type(dtype);  // named first: nvcc and HDF5's type macros
    h5::Id data =
        h5::dataset(H5Dcreate2(file.get(), kPartDataset, stored, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
    if (!data) throw io_error("creating the part '" + path + "': HDF5 refused the dataset");
    const haddr_t at = H5Dget_offset(data.get());
    if (at == HADDR_UNDEF) throw io_error("creating the part '" + path + "': the dataset has no offset");
    offset = static_cast<std::uint64_t>(at);
    data.reset();
    if (!file.close())
      throw io_error("creating the part '" + path + "': " +
                     std::string(errno == ENOSPC ? "no space left on device" : "HDF5 could not finish the file"));
  }
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) throw create_error("cannot reopen the part '" + path + "': " + std::strerror(errno));
  int rc = 0;
  if (memory_backed(path)) {
    struct statvfs info {};
    if (::fstatvfs(fd.get(), &info) == 0 &&
        static_cast<std::uint64_t>(info.f_bavail) * static_cast<std::uint64_t>(info.f_frsize) < bytes)
      rc = ENOSPC;
  } else {
    rc = ::posix_fallocate(fd.get(), static_cast<off_t>(offset), static_cast<off_t>(bytes));
  }
  if (rc == ENOSPC || rc == EFBIG || rc == EDQUOT)
    throw io_error("output part '" + path + "' needs " + format_bytes(bytes) + ": " +
                   (rc == ENOSPC  ? "no space left on device"
                    : rc == EFBIG ? "file size limit exceeded (ulimit -f)"
                                  : "disk quota exceeded"));
  ::fsync(fd.get());
  return offset;
}

std::uint64_t part_offset(const std::string& path, const std::array<std::int64_t, 3>& dims, OutputType dtype,
                          std::string& damage, bool* compressed) {
  if (compressed) *compressed = false;
  h5::QuietErrors quiet;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    damage = "its part '" + path + "' is missing";
    return 0;
  }
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id data = file ? h5::dataset(H5Dopen2(file.get(), kPartDataset, H5P_DEFAULT)) : h5::Id{};
  if (!data) {
    damage = "its part '" + path + "' cannot be opened";
    return 0;
  }
  const auto have = h5::dataset_dims(data.get());
  h5::Id type = h5::datatype(H5Dget_type(data.get()));
  h5::Id dcpl = h5::plist(H5Dget_create_plist(data.get()));
  const hid_t stored = stored_hdf5_type(dtype);
  const std::uint64_t bytes = static_cast<std::uint64_t>(dims[0] * dims[1] * dims[2]) * stored_bytes(dtype);
  const haddr_t at = H5Dget_offset(data.get());
  if (compressed && have.size() == 3 && to_h(dims[0]) == have[0] && to_h(dims[1]) == have[1] &&
      to_h(dims[2]) == have[2] && type && H5Tequal(type.get(), stored) > 0 && dcpl &&
      H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
    *compressed = true;
    return 0;
  }
  if (have.size() != 3 || to_h(dims[0]) != have[0] || to_h(dims[1]) != have[1] || to_h(dims[2]) != have[2] || !type ||
      H5Tequal(type.get(), stored) <= 0 || !dcpl || H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS || at == HADDR_UNDEF ||
      static_cast<std::uint64_t>(at) + bytes > static_cast<std::uint64_t>(st.st_size)) {
    damage = "its part '" + path + "' is not the part it made";
    return 0;
  }
  return static_cast<std::uint64_t>(at);
}

void map_parts(hid_t dcpl, const std::array<std::int64_t, 3>& dims, int axis_pos,
               const std::vector<std::int64_t>& bounds, const std::string& folder) {
  const hsize_t hdims[3] = {to_h(dims[0]), to_h(dims[1]), to_h(dims[2])};
  // Where a part cannot be found (a master copied away from its folder),
  // readers get NaN, never values that look computed.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  h5::check(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan), "H5Pset_fill_value");
  h5::Id vspace = h5::dataspace(H5Screate_simple(3, hdims, nullptr));
  for (std::size_t p = 0; p + 1 < bounds.size(); ++p) {
    hsize_t start[3] = {0, 0, 0}, count[3] = {hdims[0], hdims[1], hdims[2]};
    start[axis_pos] = to_h(bounds[p]);
    count[axis_pos] = to_h(bounds[p + 1] - bounds[p]);
    h5::Id source = h5::dataspace(H5Screate_simple(3, count, nullptr));
    h5::check(H5Sselect_hyperslab(vspace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), "H5Sselect_hyperslab");
    const std::string file = folder + "/" + part_file_name(p);
    h5::check(H5Pset_virtual(dcpl, vspace.get(), vds_escape(file).c_str(), kPartDataset, source.get()),
              "H5Pset_virtual");
  }
}

void remove_part_set_or_warn(const std::string& folder, const std::string& out_path) {
  const std::string why = remove_part_set(folder, base_name(out_path));
  if (!why.empty())
    std::cerr << "discount_app: warning: '" << folder << "' is named like a part folder of '" << out_path
              << "' and left alone: " << why << std::endl;
}

void fsync_dir(const std::string& dir) {
  if (int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

std::string part_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
         std::to_string(static_cast<long long>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec) + " " +
         std::to_string(static_cast<long long>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec);
}

}  // namespace discount
