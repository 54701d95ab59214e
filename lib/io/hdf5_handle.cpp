#include "io/hdf5_handle.hpp"

#include "common/error.hpp"

namespace discount::h5 {

void check(herr_t status, const char* call) {
  if (status < 0) throw internal_error(std::string("HDF5 call ") + call + " failed");
}

Id input_dataset_access() {
  Id dapl = plist(H5Pcreate(H5P_DATASET_ACCESS));
  check(H5Pset_efile_prefix(dapl.get(), "${ORIGIN}"), "H5Pset_efile_prefix");
  check(H5Pset_virtual_prefix(dapl.get(), "${ORIGIN}"), "H5Pset_virtual_prefix");
  return dapl;
}

std::string shape_string(const std::vector<hsize_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? " x " : "") + std::to_string(dims[i]);
  return text + "]";
}

std::vector<hsize_t> dataset_dims(hid_t dataset) {
  Id space = dataspace(H5Dget_space(dataset));
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) throw internal_error("H5Sget_simple_extent_ndims failed");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

void write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  Id type = datatype(H5Tcopy(H5T_C_S1));
  check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), "H5Tset_size");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  Id space = dataspace(H5Screate(H5S_SCALAR));
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  Id attr = attribute(H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr || H5Awrite(attr.get(), type.get(), value.empty() ? "" : value.data()) < 0)
    throw io_error("cannot write attribute '" + name + "'");
}

std::string read_string_attribute(hid_t object, const std::string& name) {
  if (H5Aexists(object, name.c_str()) <= 0) return {};
  Id attr = attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  Id type = datatype(H5Aget_type(attr.get()));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0) return {};
  std::string value(H5Tget_size(type.get()), '\0');
  if (H5Aread(attr.get(), type.get(), value.data()) < 0) return {};
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::mutex& library_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace discount::h5
