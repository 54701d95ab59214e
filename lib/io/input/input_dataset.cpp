// Opening one dataset of an HDF5 input: its rank, stored type and storage
// are checked (io/input/input_checks.hpp), and it is decided whether slabs of it
// take positional reads or go through HDF5, and why (moved out of
// io/input/input.cpp, which reads through what this opens).
#include "io/input/input_dataset.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/crash_handler.hpp"
#include "common/error.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/input/input_files.hpp"

namespace discount {

namespace {

// How many elements the missing dataset of `rank` would hold, as far as
// the other one tells (0: unknown): the multiplier holds ids x nums of the
// discount dataset read in input.axes order.
std::uint64_t expected_elements(hid_t file, const InputConfig& config, int rank) {
  if (rank != 2 || H5Lexists(file, config.discount.c_str(), H5P_DEFAULT) <= 0) return 0;
  h5::Id disc = h5::dataset(H5Dopen2(file, config.discount.c_str(), H5P_DEFAULT));
  if (!disc) return 0;
  const auto dims = h5::dataset_dims(disc.get());
  if (dims.size() != 3) return 0;
  std::uint64_t elements = 1;
  for (int j = 0; j < 3; ++j)
    if (config.axes[j] != Axis::date) elements *= dims[j];
  return elements;
}

// "a soft link to '/x'", "an external link to 'f.h5:/x'", or "a link".
std::string link_text(hid_t file, const std::string& name) {
  H5L_info_t link{};
  if (H5Lget_info(file, name.c_str(), &link, H5P_DEFAULT) < 0) return "a link";
  std::vector<char> value(link.u.val_size + 1, '\0');
  if (link.type == H5L_TYPE_SOFT && H5Lget_val(file, name.c_str(), value.data(), value.size(), H5P_DEFAULT) >= 0)
    return "a soft link to '" + std::string(value.data()) + "'";
  const char *target_file = nullptr, *target = nullptr;
  if (link.type == H5L_TYPE_EXTERNAL && H5Lget_val(file, name.c_str(), value.data(), value.size(), H5P_DEFAULT) >= 0 &&
      H5Lunpack_elink_val(value.data(), value.size(), nullptr, &target_file, &target) >= 0)
    return "an external link to '" + std::string(target_file) + ":" + target + "'";
  return "a link";
}

// The descriptor for positional reads: the one HDF5 itself opened for the
// file that holds the dataset (input.file, or an external link's target).
void open_holder(const InputConfig& config, DatasetInfo& info, std::uint64_t bytes, const std::string& where,
                 std::vector<std::string>& why) {
  h5::Id holder = h5::file(H5Iget_file_id(info.id.get()));
  h5::Id fapl = holder ? h5::plist(H5Fget_access_plist(holder.get())) : h5::Id{};
  void* handle = nullptr;
  if (!fapl || H5Pget_driver(fapl.get()) != H5FD_SEC2 || H5Fget_vfd_handle(holder.get(), H5P_DEFAULT, &handle) < 0 ||
      !handle) {
    why.push_back("not a plain POSIX file");
    return;
  }
  info.fd = UniqueFd(::fcntl(*static_cast<int*>(handle), F_DUPFD_CLOEXEC, 0));
  if (info.fd.get() < 0) {
    why.push_back("cannot duplicate the file descriptor");
    return;
  }
  struct stat st {
  }, main_st{};
  if (::fstat(info.fd.get(), &st) != 0) throw io_error(where + ": " + std::strerror(errno));
  if (::stat(config.file.c_str(), &main_st) != 0 || st.st_dev != main_st.st_dev || st.st_ino != main_st.st_ino) {
    const ssize_t length = H5Fget_name(holder.get(), nullptr, 0);
    std::vector<char> text(static_cast<std::size_t>(std::max<ssize_t>(length, 0)) + 1, '\0');
    if (length > 0) H5Fget_name(holder.get(), text.data(), text.size());
    info.holder = length > 0 ? text.data() : "another file";
  }
  if (info.storage.layout == H5D_CONTIGUOUS && info.offset + bytes > static_cast<std::uint64_t>(st.st_size))
    throw data_error(where + " is truncated: its data ends at byte " + std::to_string(info.offset + bytes) +
                     " of a file of " + std::to_string(st.st_size) + " bytes");
  // Slabs are read front to back: a larger read-ahead window.
  ::posix_fadvise(info.fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
}

// The stored type as the report names it ("float32 big-endian", "int16"); a
// type float64 cannot hold exactly, or no number at all, is refused (65).
std::string supported_type_text(hid_t type, const std::string& name, const std::string& key, const std::string& where) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT && size <= 8) {
    check_float_layout(type, where);
    const std::string text = "float" + std::to_string(size * 8);
    return H5Tget_order(type) == H5T_ORDER_BE ? text + " big-endian" : text;
  } else if (cls == H5T_INTEGER && size <= 4) {
    return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(size * 8);
  } else if (cls == H5T_INTEGER && size == 8) {
    throw data_error(key + ": dataset '" + name + "' holds " + (H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "") +
                     "int64, which float64 holds exactly only up to 2^53; convert it where that is known to hold "
                     "(h5py: f.create_dataset('" +
                     name + "_f64', data=f['" + name + "'][...].astype('float64'))) and name the copy in " + key);
  } else {
    std::string what = cls == H5T_INTEGER ? std::to_string(size * 8) +
                                                "-bit integer (not exactly representable "
                                                "as float64)"
                       : cls == H5T_STRING ? "string"
                       : cls == H5T_FLOAT  ? std::to_string(size * 8) + "-bit float"
                                           : "non-numeric";
    throw data_error(key + ": dataset '" + name + "' has unsupported type " + what +
                     "; supported: float16/32/64 (either byte order) and integers up to 32 bits");
  }
}

}  // namespace

h5::Id open_input_file(const std::string& path, const std::string& what) {
  register_codec_filters();
  if (H5Fis_hdf5(path.c_str()) <= 0) throw missing_error(what + " is not an HDF5 file");
  std::string messages;  // read before the next HDF5 call clears them
  h5::Id file;
  {
    crash::InsideHdf5 inside("opening file '" + path + "'");
    h5::Id fapl = h5::input_file_access(kInputMetadataCache);
    file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!file) messages = h5::error_messages();
  }
  if (file) return file;
  const std::string cause = messages.substr(0, messages.find("; "));
  switch (h5::open_failure(messages)) {
    case h5::OpenFailure::truncated:
      throw data_error(what + " is truncated (" + cause + "); copy it again from its source");
    case h5::OpenFailure::locked:
      throw missing_error(what +
                          " is locked by another process (HDF5 file locking: a program has it open for "
                          "writing); wait for it to close the file, or set HDF5_USE_FILE_LOCKING=FALSE if you "
                          "know no one writes to it");
    case h5::OpenFailure::other: break;
  }
  throw missing_error(what + " cannot be opened as HDF5" + (cause.empty() ? std::string() : " (" + cause + ")"));
}

namespace {

// Why the dataset cannot be read by positional reads of its bytes in the
// file (none: it can, where it also has a file offset).
std::vector<std::string> slow_path_reasons(const DatasetInfo& info, hid_t type, hid_t dcpl, const InputConfig& config,
                                           std::uint64_t bytes, const std::string& where) {
  const H5D_layout_t layout = info.storage.layout;
  std::vector<std::string> why;
  if (layout == H5D_CHUNKED) why.push_back("chunked");
  if (layout == H5D_COMPACT) why.push_back("compact");
  if (layout == H5D_VIRTUAL) {
    why.push_back("virtual");
    check_virtual_sources(dcpl, config.file, where);
  }
  for (const auto& filter : info.storage.filters) why.push_back(filter);
  const int externals = info.storage.externals;
  if (externals > 0) {
    why.push_back("external raw storage");
    check_external_files(dcpl, externals, bytes, config.file, where);
  }
  if (H5Tequal(type, H5T_NATIVE_DOUBLE) <= 0) why.push_back(info.type_text + " converted");
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  h5::check(H5Dget_space_status(info.id.get(), &status), "H5Dget_space_status");
  if (layout == H5D_CONTIGUOUS && externals <= 0 && status != H5D_SPACE_STATUS_ALLOCATED)
    why.push_back("never written: fill value");
  return why;
}

}  // namespace

DatasetInfo open_input_dataset(hid_t file, const InputConfig& config, const std::string& name, const std::string& key,
                               int rank) {
  DatasetInfo info;
  const std::string where = key + ": dataset '" + name + "' in '" + config.file + "'";
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0)
    throw missing_error(key + ": dataset '" + name + "' not found in '" + config.file + "'" +
                        h5::dataset_candidates(file, rank, expected_elements(file, config, rank)));
  if (H5Oexists_by_name(file, name.c_str(), H5P_DEFAULT) <= 0)
    throw missing_error(where + " is " + link_text(file, name) + " whose target cannot be opened");
  // External raw storage and virtual sources named relatively are found
  // beside the HDF5 file, wherever the job runs from.
  h5::Id dapl = h5::input_dataset_access();
  info.id = h5::dataset(H5Dopen2(file, name.c_str(), dapl.get()));
  if (!info.id) throw missing_error(key + ": '" + name + "' in '" + config.file + "' is not a dataset");
  info.dims = h5::dataset_dims(info.id.get());
  if (static_cast<int>(info.dims.size()) != rank)
    throw data_error(key + ": dataset '" + name + "' has rank " + std::to_string(info.dims.size()) + " " +
                     h5::shape_string(info.dims) + ", expected rank " + std::to_string(rank));
  h5::Id type = h5::datatype(H5Dget_type(info.id.get()));
  const std::size_t size = H5Tget_size(type.get());
  info.type_text = supported_type_text(type.get(), name, key, where);
  hsize_t elements = 1;
  for (auto d : info.dims) elements *= d;
  const std::uint64_t bytes = static_cast<std::uint64_t>(elements) * size;
  info.element_size = size;

  h5::Id dcpl = h5::plist(H5Dget_create_plist(info.id.get()));
  if (!dcpl) throw data_error(where + ": its creation properties cannot be read; check the file with h5dump");
  info.storage = check_storage(info.id.get(), dcpl.get(), info.dims, size, where);
  std::vector<std::string> why = slow_path_reasons(info, type.get(), dcpl.get(), config, bytes, where);
  const H5D_layout_t layout = info.storage.layout;
  const int externals = info.storage.externals;
  // With a userblock, H5Dget_offset adds the block's size even to an
  // undefined address, so allocation is checked on its own above.
  info.offset = H5Dget_offset(info.id.get());
  if (why.empty() && info.offset == HADDR_UNDEF) why.push_back("no file offset");
  if (why.empty()) open_holder(config, info, bytes, where, why);
  info.fast = why.empty();
  // Chunked and filtered (or chunked alone): decoded on every core by
  // io/input/chunk_reader.hpp when lib/codec implements the whole pipeline.
  if (layout == H5D_CHUNKED && externals <= 0) {
    std::vector<std::string> holder_why;
    open_holder(config, info, bytes, where, holder_why);
    std::string no;
    if (holder_why.empty()) {
      info.chunks = ChunkReader::open(info.id.get(), dcpl.get(), info.fd.get(), no);
      info.chunks_why = no;
    } else {
      info.chunks_why = holder_why.front();
    }
  }
  for (const auto& w : why) info.slow_why += (info.slow_why.empty() ? "" : ", ") + w;
  return info;
}

}  // namespace discount
