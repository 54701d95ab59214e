#include "io/hdf5/attributes.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"

namespace discount::h5 {

namespace {

Id utf8_string_type() {
  Id type = datatype(H5Tcopy(H5T_C_S1));
  check(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return type;
}

bool valid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > text.size()) return false;
    for (std::size_t j = 1; j < n; ++j)
      if ((static_cast<unsigned char>(text[i + j]) >> 6) != 0x2) return false;
    i += n;
  }
  return true;
}

void drop_attribute(hid_t object, const std::string& name) {
  if (H5Aexists(object, name.c_str()) > 0 && H5Adelete(object, name.c_str()) < 0)
    throw io_error("cannot replace attribute '" + name + "'");
}

// True when the type holds references anywhere (an object reference has no
// meaning in another file).
bool holds_references(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  if (cls == H5T_REFERENCE) return true;
  if (cls == H5T_VLEN || cls == H5T_ARRAY) {
    Id base = datatype(H5Tget_super(type));
    return base && holds_references(base.get());
  }
  if (cls == H5T_COMPOUND) {
    const int members = H5Tget_nmembers(type);
    for (int m = 0; m < members; ++m) {
      Id member = datatype(H5Tget_member_type(type, static_cast<unsigned>(m)));
      if (member && holds_references(member.get())) return true;
    }
  }
  return false;
}

struct CopyState {
  hid_t to;
  const std::vector<std::string>* skip;
  std::string prefix;  // of each copy's name
  int copied = 0;
  std::string failed;  // an exception never crosses HDF5's C frames
};

void copy_attribute(hid_t from, const char* name, CopyState& state) {
  const std::string key = name;
  if (is_structural_attribute(key) || std::find(state.skip->begin(), state.skip->end(), key) != state.skip->end())
    return;
  Id attr = attribute(H5Aopen(from, name, H5P_DEFAULT));
  if (!attr) return;
  Id type = datatype(H5Aget_type(attr.get()));
  Id space = dataspace(H5Aget_space(attr.get()));
  if (!type || !space || holds_references(type.get())) return;
  // Fixed-length text (netCDF's NC_CHAR) becomes UTF-8 variable-length
  // text, which h5py reads as str.
  // Text that is not UTF-8 (Latin-1, say) is copied as the bytes it is.
  if (H5Tget_class(type.get()) == H5T_STRING && H5Tis_variable_str(type.get()) <= 0 &&
      H5Sget_simple_extent_npoints(space.get()) == 1 && valid_utf8(read_text_attribute(from, key))) {
    attr.reset();
    write_text_attribute(state.to, state.prefix + key, read_text_attribute(from, key));
    ++state.copied;
    return;
  }
  // Read in the stored type and write it back as is: variable-length data
  // comes back as pointers HDF5 allocated, reclaimed after the write.
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  const std::size_t size = H5Tget_size(type.get());
  if (points < 0 || size == 0) return;
  std::vector<unsigned char> buffer(std::max<std::size_t>(1, static_cast<std::size_t>(points) * size));
  if (H5Aread(attr.get(), type.get(), buffer.data()) < 0) return;
  const std::string target = state.prefix + key;
  drop_attribute(state.to, target);
  Id copy = attribute(H5Acreate2(state.to, target.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  const bool ok = copy && H5Awrite(copy.get(), type.get(), buffer.data()) >= 0;
  if (H5Tdetect_class(type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(type.get()) > 0)
    reclaim(type.get(), space.get(), buffer.data());
  if (!ok) throw io_error("cannot copy attribute '" + key + "'");
  ++state.copied;
}

herr_t copy_one(hid_t from, const char* name, const H5A_info_t*, void* data) {
  auto& state = *static_cast<CopyState*>(data);
  try {
    copy_attribute(from, name, state);
    return 0;
  } catch (const std::exception& e) {
    state.failed = e.what();
    return -1;
  }
}

}  // namespace

void write_text_attribute(hid_t object, const std::string& name, const std::string& value) {
  Id type = utf8_string_type();
  Id space = dataspace(H5Screate(H5S_SCALAR));
  drop_attribute(object, name);
  Id attr = attribute(H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  const char* text = value.c_str();
  if (!attr || H5Awrite(attr.get(), type.get(), &text) < 0) throw io_error("cannot write attribute '" + name + "'");
}

void write_int_attribute(hid_t object, const std::string& name, const std::vector<std::int64_t>& values) {
  const hsize_t count = values.size();
  Id space = dataspace(count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr));
  drop_attribute(object, name);
  const hid_t stored = H5T_STD_I64LE, memory = H5T_NATIVE_INT64;
  Id attr = attribute(H5Acreate2(object, name.c_str(), stored, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr || H5Awrite(attr.get(), memory, values.data()) < 0) throw io_error("cannot write attribute '" + name + "'");
}

std::string read_text_attribute(hid_t object, const std::string& name) {
  if (H5Aexists(object, name.c_str()) <= 0) return {};
  Id attr = attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  Id type = datatype(H5Aget_type(attr.get()));
  Id space = dataspace(H5Aget_space(attr.get()));
  if (!type || H5Tget_class(type.get()) != H5T_STRING || H5Sget_simple_extent_npoints(space.get()) != 1) return {};
  if (H5Tis_variable_str(type.get()) > 0) {
    char* text = nullptr;
    if (H5Aread(attr.get(), type.get(), &text) < 0) return {};
    std::string value = text ? text : "";
    reclaim(type.get(), space.get(), &text);
    return value;
  }
  std::string value(H5Tget_size(type.get()), '\0');
  if (H5Aread(attr.get(), type.get(), value.data()) < 0) return {};
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

void reclaim(hid_t type, hid_t space, void* buffer) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(type, space, H5P_DEFAULT, buffer);
#else
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, buffer);
#endif
}

bool is_structural_attribute(const std::string& name) {
  static const char* const names[] = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS",
                                      "NAME",           "_Netcdf4Dimid",  "_Netcdf4Coordinates",
                                      "_NCProperties",  "_nc3_strict",    "_FillValue"};
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return name == n; });
}

int copy_attributes(hid_t from, hid_t to, const std::vector<std::string>& skip, const std::string& prefix) {
  CopyState state{to, &skip, prefix, 0, {}};
  hsize_t index = 0;
  if (H5Aiterate2(from, H5_INDEX_NAME, H5_ITER_INC, &index, copy_one, &state) < 0)
    throw io_error(state.failed.empty() ? std::string("cannot copy the attributes") : state.failed);
  return state.copied;
}

}  // namespace discount::h5
