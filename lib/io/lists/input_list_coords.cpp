#include "io/lists/input_list_coords.hpp"

#include <hdf5_hl.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/error.hpp"
#include "io/hdf5/attributes.hpp"
#include "io/hdf5/cf_time.hpp"
#include "io/hdf5/dimension_names.hpp"
#include "io/hdf5/hdf5_handle.hpp"

namespace discount {

namespace {

// netCDF-4 marks a dimension without a coordinate variable with a scale of this NAME.
constexpr const char* kBareDimension = "This is a netCDF dimension but not a netCDF variable";
// Where the joined coordinates sit in the virtual file.
constexpr const char* kGroup = "/.coordinates";

// A 1-D dataset of `extent` values: not netCDF's placeholder for a bare
// dimension, nor references or variable-length sequences other than strings.
bool usable(hid_t file, const std::string& path, hsize_t extent) {
  if (path.empty() || H5Lexists(file, path.c_str(), H5P_DEFAULT) <= 0) return false;
  h5::Id data = h5::dataset(H5Dopen2(file, path.c_str(), h5::input_dataset_access().get()));
  if (!data) return false;
  const auto dims = h5::dataset_dims(data.get());
  if (dims.size() != 1 || dims[0] != extent) return false;
  if (h5::read_text_attribute(data.get(), "NAME").rfind(kBareDimension, 0) == 0) return false;
  h5::Id type = h5::datatype(H5Dget_type(data.get()));
  return type && H5Tdetect_class(type.get(), H5T_REFERENCE) <= 0 &&
         (H5Tis_variable_str(type.get()) > 0 || H5Tdetect_class(type.get(), H5T_VLEN) <= 0);
}

// One file's coordinate along one axis.
struct Coord {
  std::string file, path;  // path empty: none
  h5::Id type;
  std::string units, calendar;
  hsize_t count = 0;
};

Coord find_coordinate(const ListFiles& files, std::size_t k, unsigned j) {
  Coord c;
  c.file = files.paths[k];
  c.count = files.disc_dims[k][j];
  h5::Id file = h5::file(H5Fopen(c.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id disc =
      file ? h5::dataset(H5Dopen2(file.get(), files.discount.c_str(), h5::input_dataset_access().get())) : h5::Id{};
  if (!disc) return c;
  std::string path = attached_scale(disc.get(), j);
  if (!usable(file.get(), path, c.count)) {
    path.clear();
    const auto slash = files.discount.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "/" : files.discount.substr(0, slash + 1);
    const std::string axis = axis_name(files.axes[j]);
    for (const std::string& name : {axis, axis + "s"})
      if (path.empty() && usable(file.get(), dir + name, c.count)) path = dir + name;
  }
  if (path.empty()) return c;
  c.path = path;
  h5::Id data = h5::dataset(H5Dopen2(file.get(), path.c_str(), h5::input_dataset_access().get()));
  c.type = h5::datatype(H5Dget_type(data.get()));
  c.units = h5::read_text_attribute(data.get(), "units");
  c.calendar = h5::read_text_attribute(data.get(), "calendar");
  return c;
}

std::vector<Coord> find_coordinates(const ListFiles& files, unsigned j) {
  std::vector<Coord> coords;
  for (std::size_t k = 0; k < files.paths.size(); ++k) coords.push_back(find_coordinate(files, k, j));
  return coords;
}

unsigned position(const ListFiles& files, Axis axis) {
  unsigned j = 0;
  while (j < 2 && files.axes[j] != axis) ++j;
  return j;
}

std::string named(const Coord& c, Axis axis) { return std::string(axis_name(axis)) + " coordinate '" + c.path + "'"; }

// How one axis's values are read from every file: as stored, or CF times
// counted in a common step from the first file's reference date.
struct Encoding {
  h5::Id memory;  // the type the values are read as
  bool convert = false, integer = false;
  std::int64_t step_ns = 0;
  std::vector<TimeUnits> units;  // each file's, when converting
  std::string units_text;        // the joined coordinate's units, when converting
};

// Reconciles differing CF time units; refuses (65) anything else that differs.
Encoding time_encoding(const std::vector<Coord>& coords, Axis axis) {
  const Coord& first = coords.front();
  Encoding e;
  std::vector<TimeNs> spans;
  for (const Coord& c : coords) {
    const auto units = parse_time_units(c.units);
    if (!units)
      throw data_error("input.file list: '" + c.file + "' gives its " + named(c, axis) + " the units '" + c.units +
                       "' where '" + first.file + "' has '" + first.units + "'; write the files with the same units");
    e.units.push_back(*units);
    spans.push_back(units->step_ns);
    spans.push_back(units->epoch_ns - e.units.front().epoch_ns);
  }
  const H5T_class_t cls = H5Tget_class(first.type.get());
  const bool signed_integer = cls == H5T_INTEGER && H5Tget_sign(first.type.get()) == H5T_SGN_2;
  const bool before =
      std::any_of(e.units.begin(), e.units.end(), [](const TimeUnits& u) { return u.before_gregorian; });
  const bool proleptic = first.calendar == "proleptic_gregorian";
  const Coord& odd =
      *std::find_if(coords.begin(), coords.end(), [&](const Coord& c) { return c.units != first.units; });
  if ((!signed_integer && cls != H5T_FLOAT) || !gregorian_calendar(first.calendar) || (before && !proleptic))
    throw data_error("input.file list: '" + odd.file + "' counts its " + named(odd, axis) + " in '" + odd.units +
                     "' where '" + first.file + "' counts in '" + first.units + "'" +
                     (first.calendar.empty() ? "" : " (calendar '" + first.calendar + "')") +
                     ", which the app does not convert; write the files with the same units");
  e.convert = true;
  e.integer = signed_integer;
  e.step_ns = common_time_step(spans);
  e.memory = h5::datatype(H5Tcopy(e.integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE));
  e.units_text = e.step_ns == e.units.front().step_ns
                     ? first.units
                     : std::string(time_step_name(e.step_ns)) + " since " + e.units.front().since;
  return e;
}

// Fixed-length strings of one character set and padding, whatever their
// lengths (h5py stores each file's ids in the length of its longest).
bool fixed_strings(const std::vector<Coord>& coords) {
  const hid_t first = coords.front().type.get();
  return std::all_of(coords.begin(), coords.end(), [&](const Coord& c) {
    const hid_t t = c.type.get();
    return H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) <= 0 && H5Tget_cset(t) == H5Tget_cset(first) &&
           H5Tget_strpad(t) == H5Tget_strpad(first);
  });
}

Encoding encoding_of(const std::vector<Coord>& coords, Axis axis) {
  const Coord& first = coords.front();
  if (fixed_strings(coords)) {  // read as the longest
    Encoding e;
    e.memory = h5::datatype(H5Tcopy(first.type.get()));
    std::size_t size = 0;
    for (const Coord& c : coords) size = std::max(size, H5Tget_size(c.type.get()));
    h5::check(H5Tset_size(e.memory.get(), size), "H5Tset_size");
    return e;
  }
  bool same_units = true;
  for (const Coord& c : coords) {
    if (H5Tequal(c.type.get(), first.type.get()) <= 0)
      throw data_error("input.file list: '" + c.file + "' stores its " + named(c, axis) + " as another type than '" +
                       first.file + "' does");
    if (c.calendar != first.calendar)
      throw data_error("input.file list: '" + c.file + "' gives its " + named(c, axis) + " the calendar '" +
                       c.calendar + "' where '" + first.file + "' has '" + first.calendar + "'");
    same_units &= c.units == first.units;
  }
  if (!same_units) return time_encoding(coords, axis);
  Encoding e;
  e.memory = h5::datatype(H5Tcopy(first.type.get()));
  return e;
}

// Coordinate values in memory, as `type`; variable-length strings freed with them.
class Values {
 public:
  Values(hid_t type, hsize_t count)
      : type_(h5::datatype(H5Tcopy(type))),
        count_(count),
        size_(H5Tget_size(type)),
        bytes_(std::max<std::size_t>(1, count * size_), 0) {}
  Values(const Values&) = delete;
  Values& operator=(const Values&) = delete;
  ~Values() {
    if (count_ == 0 || H5Tis_variable_str(type_.get()) <= 0) return;
    h5::Id space = h5::dataspace(H5Screate_simple(1, &count_, nullptr));
    h5::reclaim(type_.get(), space.get(), bytes_.data());
  }
  unsigned char* at(hsize_t element) { return bytes_.data() + element * size_; }
  hid_t type() const { return type_.get(); }
  hsize_t count() const { return count_; }
  bool same(const Values& other) const {
    if (count_ != other.count_) return false;
    if (H5Tis_variable_str(type_.get()) <= 0)
      return std::memcmp(bytes_.data(), other.bytes_.data(), count_ * size_) == 0;
    for (hsize_t n = 0; n < count_; ++n) {
      const char *a = reinterpret_cast<char*const*>(bytes_.data())[n],
                 *b = reinterpret_cast<char*const*>(other.bytes_.data())[n];
      if (std::strcmp(a ? a : "", b ? b : "") != 0) return false;
    }
    return true;
  }

 private:
  h5::Id type_;
  hsize_t count_;
  std::size_t size_;
  std::vector<unsigned char> bytes_;
};

// File k's coordinate into `into` from element `offset`, in the encoding's step where it converts.
void read_into(const Coord& c, const Encoding& e, std::size_t k, Values& into, hsize_t offset, Axis axis) {
  h5::Id file = h5::file(H5Fopen(c.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id data = file ? h5::dataset(H5Dopen2(file.get(), c.path.c_str(), h5::input_dataset_access().get())) : h5::Id{};
  h5::Id memory = h5::dataspace(H5Screate_simple(1, &c.count, nullptr));
  if (!data || H5Dread(data.get(), into.type(), memory.get(), H5S_ALL, H5P_DEFAULT, into.at(offset)) < 0)
    throw io_error("input.file list: cannot read the " + named(c, axis) + " of '" + c.file + "' (" +
                   h5::error_messages() + ")");
  if (!e.convert) return;
  const TimeNs shift = (e.units[k].epoch_ns - e.units.front().epoch_ns) / e.step_ns;
  const std::int64_t factor = e.units[k].step_ns / e.step_ns;
  for (hsize_t n = 0; n < c.count; ++n) {
    if (!e.integer) {
      auto* v = reinterpret_cast<double*>(into.at(offset + n));
      *v = *v * static_cast<double>(factor) + static_cast<double>(shift);
      continue;
    }
    auto* v = reinterpret_cast<std::int64_t*>(into.at(offset + n));
    const TimeNs y = static_cast<TimeNs>(*v) * factor + shift;
    if (y > std::numeric_limits<std::int64_t>::max() || y < std::numeric_limits<std::int64_t>::min())
      throw data_error("input.file list: the " + named(c, axis) + " of '" + c.file +
                       "' does not fit 64-bit "
                       "integers counted in '" +
                       e.units_text + "'");
    *v = static_cast<std::int64_t>(y);
  }
}

// The joined coordinate as a dimension scale of `discount` in the virtual file.
void write_scale(hid_t vds, hid_t discount, unsigned j, Axis axis, const Coord& first, const Encoding& e,
                 Values& joined) {
  h5::Id group = h5::group(H5Lexists(vds, kGroup, H5P_DEFAULT) > 0
                               ? H5Gopen2(vds, kGroup, H5P_DEFAULT)
                               : H5Gcreate2(vds, kGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  const hid_t stored = !e.convert ? joined.type() : e.integer ? H5T_STD_I64LE : H5T_IEEE_F64LE;
  const hsize_t count = joined.count();
  h5::Id space = h5::dataspace(H5Screate_simple(1, &count, nullptr));
  const char* name = axis_name(axis);
  h5::Id data =
      group ? h5::dataset(H5Dcreate2(group.get(), name, stored, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT))
            : h5::Id{};
  if (!data || H5Dwrite(data.get(), joined.type(), H5S_ALL, H5S_ALL, H5P_DEFAULT, joined.at(0)) < 0)
    throw io_error("input.file list: cannot write the joined " + std::string(name) + " coordinate (" +
                   h5::error_messages() + ")");
  h5::Id file = h5::file(H5Fopen(first.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id source =
      file ? h5::dataset(H5Dopen2(file.get(), first.path.c_str(), h5::input_dataset_access().get())) : h5::Id{};
  if (source) h5::copy_attributes(source.get(), data.get());
  if (e.convert) h5::write_text_attribute(data.get(), "units", e.units_text);
  if (H5DSset_scale(data.get(), name) < 0 || H5DSattach_scale(discount, data.get(), j) < 0)
    throw io_error("input.file list: cannot attach the joined " + std::string(name) + " coordinate");
}

}  // namespace

CoordAgreement compare_list_coordinates(const ListFiles& files, Axis axis) {
  const unsigned j = position(files, axis);
  const std::vector<Coord> coords = find_coordinates(files, j);
  const auto absent = std::count_if(coords.begin(), coords.end(), [](const Coord& c) { return c.path.empty(); });
  if (absent == static_cast<std::ptrdiff_t>(coords.size())) return CoordAgreement::none;
  if (absent > 0) return CoordAgreement::differ;
  const Encoding e = encoding_of(coords, axis);
  Values first(e.memory.get(), coords.front().count);
  read_into(coords.front(), e, 0, first, 0, axis);
  for (std::size_t k = 1; k < coords.size(); ++k) {
    Values other(e.memory.get(), coords[k].count);
    read_into(coords[k], e, k, other, 0, axis);
    if (!first.same(other)) return CoordAgreement::differ;
  }
  return CoordAgreement::equal;
}

void write_list_coordinates(const ListFiles& files, Axis along, hid_t vds, hid_t discount) {
  for (unsigned j = 0; j < 3; ++j) {
    const Axis axis = files.axes[j];
    const std::vector<Coord> coords = find_coordinates(files, j);
    const Coord& first = coords.front();
    const std::string list = "input.file list along " + std::string(axis_name(along)) + ": '";
    for (const Coord& c : coords)
      if (c.path.empty() != first.path.empty())
        throw data_error(list + c.file + "' has " +
                         (c.path.empty() ? "no " + std::string(axis_name(axis)) + " coordinate where '" + first.file +
                                               "' has '" + first.path + "'"
                                         : "the " + named(c, axis) + " where '" + first.file + "' has none"));
    if (first.path.empty()) continue;
    const Encoding e = encoding_of(coords, axis);
    hsize_t total = 0;
    for (const Coord& c : coords) total += axis == along ? c.count : 0;
    Values joined(e.memory.get(), axis == along ? total : first.count);
    hsize_t offset = 0;
    read_into(first, e, 0, joined, 0, axis);
    for (std::size_t k = 1; k < coords.size(); ++k) {
      if (axis == along) {
        offset += coords[k - 1].count;
        read_into(coords[k], e, k, joined, offset, axis);
        continue;
      }
      Values other(e.memory.get(), coords[k].count);
      read_into(coords[k], e, k, other, 0, axis);
      if (!joined.same(other))
        throw data_error(list + coords[k].file + "' has other " + axis_name(axis) + " coordinates ('" + coords[k].path +
                         "') than '" + first.file + "': files split along " + axis_name(along) + " hold the same " +
                         axis_name(axis) + "s");
    }
    write_scale(vds, discount, j, axis, first, e, joined);
  }
}

void copy_list_attributes(const ListFiles& files, hid_t vds, hid_t discount) {
  h5::Id file = h5::file(H5Fopen(files.paths.front().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file) return;
  h5::Id root = h5::group(H5Gopen2(file.get(), "/", H5P_DEFAULT));
  h5::Id vds_root = h5::group(H5Gopen2(vds, "/", H5P_DEFAULT));
  if (root && vds_root) h5::copy_attributes(root.get(), vds_root.get());
  h5::Id disc = h5::dataset(H5Dopen2(file.get(), files.discount.c_str(), h5::input_dataset_access().get()));
  if (disc) h5::copy_attributes(disc.get(), discount);
}

}  // namespace discount
