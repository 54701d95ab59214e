#include "io/output/output_coords.hpp"

#include <hdf5_hl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/error.hpp"
#include "io/hdf5/attributes.hpp"
#include "io/hdf5/dimension_names.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/records/run_table.hpp"

namespace discount {

namespace {

// netCDF-4 marks a dimension that has no coordinate variable with a scale of
// this NAME holding nothing but fill values: no coordinates there.
constexpr const char* kBareDimension = "This is a netCDF dimension but not a netCDF variable";

struct Selection {
  hsize_t start = 0, count = 0;
};

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::string object_path(hid_t object) {
  const ssize_t n = H5Iget_name(object, nullptr, 0);
  if (n <= 0) return "/";
  std::string name(static_cast<std::size_t>(n) + 1, '\0');
  H5Iget_name(object, name.data(), name.size());
  name.resize(static_cast<std::size_t>(n));
  return name;
}

// A usable coordinate: a 1-D dataset of `extent` elements, not netCDF's
// placeholder for a bare dimension.
h5::Id open_coordinate(hid_t file, const std::string& path, hsize_t extent) {
  if (path.empty() || H5Lexists(file, path.c_str(), H5P_DEFAULT) <= 0) return {};
  h5::Id dapl = h5::input_dataset_access();
  h5::Id data = h5::dataset(H5Dopen2(file, path.c_str(), dapl.get()));
  if (!data) return {};
  const auto dims = h5::dataset_dims(data.get());
  if (dims.size() != 1 || dims[0] != extent) return {};
  if (h5::read_text_attribute(data.get(), "NAME").rfind(kBareDimension, 0) == 0) return {};
  h5::Id type = h5::datatype(H5Dget_type(data.get()));
  if (!type || H5Tdetect_class(type.get(), H5T_REFERENCE) > 0) return {};
  return data;
}

// The input's coordinate for file axis `j` of discount: its dimension scale,
// else a 1-D dataset beside it named after the axis ("date" or "dates").
h5::Id input_coordinate(hid_t file, hid_t discount, const std::string& discount_path, unsigned j, const char* axis,
                        hsize_t extent) {
  if (h5::Id scale = open_coordinate(file, attached_scale(discount, j), extent)) return scale;
  const std::string dir = parent_of(discount_path);
  const std::string prefix = dir == "/" ? "/" : dir + "/";
  for (const std::string& name : {std::string(axis), std::string(axis) + "s"})
    if (h5::Id found = open_coordinate(file, prefix + name, extent)) return found;
  return {};
}

// Copies elements [start, start + count) of `source` into a new dataset.
h5::Id copy_slice(hid_t source, hid_t group, const char* name, Selection sel) {
  h5::Id type = h5::datatype(H5Dget_type(source));
  h5::Id file_space = h5::dataspace(H5Dget_space(source));
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &sel.start, nullptr, &sel.count, nullptr),
            "H5Sselect_hyperslab");
  h5::Id space = h5::dataspace(H5Screate_simple(1, &sel.count, nullptr));
  std::vector<unsigned char> buffer(std::max<std::size_t>(1, sel.count * H5Tget_size(type.get())));
  if (H5Dread(source, type.get(), space.get(), file_space.get(), H5P_DEFAULT, buffer.data()) < 0)
    throw io_error("cannot read the input's coordinate '" + object_path(source) + "'");
  h5::Id copy = h5::dataset(H5Dcreate2(group, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  const bool ok = copy && H5Dwrite(copy.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) >= 0;
  if (H5Tdetect_class(type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(type.get()) > 0)
    h5::reclaim(type.get(), space.get(), buffer.data());
  if (!ok) throw io_error(std::string("cannot write the coordinate '") + name + "'");
  h5::copy_attributes(source, copy.get());
  return copy;
}

// The index into the input along the axis: start, start + 1, ...
h5::Id index_coordinate(hid_t group, const char* name, Selection sel, const std::string& from) {
  std::vector<std::int64_t> values(sel.count);
  for (hsize_t n = 0; n < sel.count; ++n) values[n] = static_cast<std::int64_t>(sel.start + n);
  h5::Id space = h5::dataspace(H5Screate_simple(1, &sel.count, nullptr));
  const hid_t stored = H5T_STD_I64LE, memory = H5T_NATIVE_INT64;
  h5::Id data = h5::dataset(H5Dcreate2(group, name, stored, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!data || H5Dwrite(data.get(), memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    throw io_error(std::string("cannot write the coordinate '") + name + "'");
  h5::write_text_attribute(data.get(), "long_name", std::string(name) + " index in " + from);
  return data;
}

// Beyond this many entries an index coordinate costs more than it tells
// (2^31 ids: 17 GB written before the first slab); the axis is then a netCDF
// dimension without a coordinate variable, a scale that stores no data.
constexpr hsize_t kMaxIndexCoordinate = hsize_t{1} << 24;

// netCDF-4's form of a dimension with no coordinate variable: a scale named
// with netCDF's marker, never written (no storage; readers give the axis a
// plain 0..n-1 range).
h5::Id dimension_only(hid_t group, const char* name, hsize_t count) {
  h5::Id space = h5::dataspace(H5Screate_simple(1, &count, nullptr));
  const hid_t stored = H5T_IEEE_F32LE;
  h5::Id data = h5::dataset(H5Dcreate2(group, name, stored, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!data) throw io_error(std::string("cannot create the dimension '") + name + "'");
  return data;
}

// The input file and its discount dataset, when there is one to read from.
struct InputObjects {
  h5::Id file, discount;
};

InputObjects open_input_objects(const OutputDecor& decor) {
  InputObjects in;
  const std::string& path = decor.coordinates_file.empty() ? decor.input_file : decor.coordinates_file;
  if (path.empty() || H5Fis_hdf5(path.c_str()) <= 0) return in;
  in.file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!in.file || H5Lexists(in.file.get(), decor.input_dataset.c_str(), H5P_DEFAULT) <= 0) return in;
  h5::Id dapl = h5::input_dataset_access();
  in.discount = h5::dataset(H5Dopen2(in.file.get(), decor.input_dataset.c_str(), dapl.get()));
  return in;
}

// A text attribute of the dataset at `path` in `file`, "" where none.
std::string dataset_text(hid_t file, const std::string& path, const char* name) {
  if (!file || path.empty() || H5Lexists(file, path.c_str(), H5P_DEFAULT) <= 0) return {};
  // The input's access list: HDF5 refuses a second open of a dataset the
  // input holds open with other file prefixes.
  h5::Id data = h5::dataset(H5Dopen2(file, path.c_str(), h5::input_dataset_access().get()));
  return data ? h5::read_text_attribute(data.get(), name) : std::string();
}

// The units of a product: a dimensionless factor ("1", "") leaves the other's.
std::string product_units(const std::string& a, const std::string& b) {
  const auto dimensionless = [](const std::string& u) { return u == "1" || u == "-" || u == "dimensionless"; };
  if (dimensionless(a)) return b;
  if (dimensionless(b)) return a;
  return a + " " + b;
}

// cv describes itself: its own long_name and description; units only where
// both inputs give theirs; discount's attributes kept with a "discount_"
// prefix, since they describe discount, not cv.
void describe_cv(const InputObjects& in, const OutputDecor& decor, hid_t data) {
  if (in.discount) h5::copy_attributes(in.discount.get(), data, {"axes"}, "discount_");
  const std::string disc_name = in.discount ? h5::read_text_attribute(in.discount.get(), "long_name") : "";
  const std::string mult_name = dataset_text(in.file.get(), decor.multiplier_dataset, "long_name");
  h5::write_text_attribute(data, "long_name", "multBy * discount");
  h5::write_text_attribute(
      data, "description",
      "cv[date][id][num] = multBy[id][num] * discount[date][id][num]" +
          (mult_name.empty() && disc_name.empty() ? std::string()
                                                  : " (multBy: " + (mult_name.empty() ? "-" : mult_name) +
                                                        "; discount: " + (disc_name.empty() ? "-" : disc_name) + ")"));
  const std::string disc_units = in.discount ? h5::read_text_attribute(in.discount.get(), "units") : "";
  const std::string mult_units = dataset_text(in.file.get(), decor.multiplier_dataset, "units");
  if (!disc_units.empty() && !mult_units.empty())
    h5::write_text_attribute(data, "units", product_units(mult_units, disc_units));
}

}  // namespace

std::string history_with(const std::string& previous, const std::string& line) {
  return previous.empty() ? line : line + "\n" + previous;
}

void decorate_output(hid_t file, hid_t data, const OutputDecor& decor) {
  h5::QuietErrors quiet;
  const std::string cv_path = object_path(data);
  h5::Id group = h5::group(H5Gopen2(file, parent_of(cv_path).c_str(), H5P_DEFAULT));
  if (!group) throw io_error("cannot open the group of '" + cv_path + "'");
  const InputObjects in = open_input_objects(decor);
  const auto input_dims = in.discount ? h5::dataset_dims(in.discount.get()) : std::vector<hsize_t>{};
  const std::string from = decor.input_file.empty() ? "the synthetic input" : "'" + decor.input_file + "'";
  for (unsigned j = 0; j < 3; ++j) {
    const Axis axis = decor.axes[j];
    const char* name = axis_name(axis);
    const std::string coord_path = (parent_of(cv_path) == "/" ? "/" : parent_of(cv_path) + "/") + name;
    if (coord_path == cv_path)
      throw io_error("output.dataset '" + cv_path + "' has the name of the " + name +
                     " coordinate written beside it; choose another name");
    Selection sel;
    sel.start = static_cast<hsize_t>(axis == Axis::date ? decor.dates.begin : axis == Axis::id ? decor.ids.begin : 0);
    sel.count = static_cast<hsize_t>(axis == Axis::date ? decor.dates.size()
                                     : axis == Axis::id ? decor.ids.size()
                                                        : decor.nums);
    h5::Id source;
    if (in.discount && input_dims.size() == 3)
      source = input_coordinate(in.file.get(), in.discount.get(), decor.input_dataset, j, name, input_dims[j]);
    const bool bare = !source && sel.count > kMaxIndexCoordinate;
    h5::Id coord = source ? copy_slice(source.get(), group.get(), name, sel)
                   : bare ? dimension_only(group.get(), name, sel.count)
                          : index_coordinate(group.get(), name, sel, from);
    char marker[96];
    std::snprintf(marker, sizeof marker, "This is a netCDF dimension but not a netCDF variable. %10llu",
                  static_cast<unsigned long long>(sel.count));
    if (H5DSset_scale(coord.get(), bare ? marker : name) < 0 || H5DSattach_scale(data, coord.get(), j) < 0)
      throw io_error(std::string("cannot make '") + name + "' a dimension scale of '" + cv_path + "'");
  }
  describe_cv(in, decor, data);
  h5::Id root = h5::group(H5Gopen2(file, "/", H5P_DEFAULT));
  std::string title, source, history;
  if (in.file) {
    h5::Id input_root = h5::group(H5Gopen2(in.file.get(), "/", H5P_DEFAULT));
    if (input_root) {
      h5::copy_attributes(input_root.get(), root.get());
      title = h5::read_text_attribute(input_root.get(), "title");
      source = h5::read_text_attribute(input_root.get(), "source");
      history = h5::read_text_attribute(input_root.get(), "history");
    }
  }
  if (title.empty()) title = "cv = multBy * discount";
  const std::string app = "discount_app " + decor.version;
  source = source.empty() ? app : source + "; cv by " + app;
  const std::string line = utc_now() + " " + app + ": cv = multBy * discount from " + from +
                           (decor.config_path.empty() ? "" : ", config '" + decor.config_path + "'");
  h5::write_text_attribute(root.get(), "title", title);
  h5::write_text_attribute(root.get(), "source", source);
  h5::write_text_attribute(root.get(), "history", history_with(history, line));
}

void write_provenance(hid_t group, const OutputDecor& decor) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  h5::write_text_attribute(group, "version", decor.version);
  h5::write_text_attribute(group, "config_path", decor.config_path);
  h5::write_text_attribute(group, "input_file", decor.input_file);
  h5::write_text_attribute(group, "input_dataset", decor.input_dataset);
  h5::write_int_attribute(group, "input_dates", {decor.dates.begin, decor.dates.end});
  h5::write_int_attribute(group, "input_ids", {decor.ids.begin, decor.ids.end});
  h5::write_text_attribute(group, "host", host);
}

}  // namespace discount
