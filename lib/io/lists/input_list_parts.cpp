#include "io/lists/input_list_parts.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "common/error.hpp"
#include "io/input/input_dataset.hpp"
#include "io/input/input_files.hpp"

namespace discount {

namespace {

// The shape, type and dimension names of one checked dataset of a listed file.
void take(const DatasetInfo& info, std::vector<hsize_t>& dims, h5::Id& type, std::vector<std::string>& names) {
  dims = info.dims;
  type = h5::datatype(H5Dget_type(info.id.get()));
  names = dimension_names(info.id.get());
}

std::int64_t extent(const ListPart& p, const InputAxes& chosen, Axis axis) {
  for (int j = 0; j < 3; ++j)
    if (chosen.axes[j] == axis) return static_cast<std::int64_t>(p.disc_dims[static_cast<std::size_t>(j)]);
  return 0;
}

bool extents_differ(const std::vector<ListPart>& parts, const InputAxes& chosen, Axis axis) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](const ListPart& p) { return extent(p, chosen, axis) != extent(parts.front(), chosen, axis); });
}

// multBy of `file` (stored dims `dims`), rows [row, row + rows), as float64.
void read_rows(hid_t file, const std::string& name, const std::vector<hsize_t>& dims, hsize_t row, hsize_t rows,
               std::vector<double>& out, const std::string& path) {
  h5::Id data = h5::dataset(H5Dopen2(file, name.c_str(), h5::input_dataset_access().get()));
  h5::Id space = data ? h5::dataspace(H5Dget_space(data.get())) : h5::Id{};
  const hsize_t start[2] = {row, 0}, count[2] = {rows, dims[1]};
  h5::Id memory = h5::dataspace(H5Screate_simple(2, count, nullptr));
  out.resize(static_cast<std::size_t>(rows * dims[1]));
  if (!space || H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dread(data.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), H5P_DEFAULT, out.data()) < 0)
    throw io_error("input.file list: reading '" + name + "' from '" + path + "' failed (" + h5::error_messages() + ")");
}

// Where `other`'s multBy first differs from `first`'s, bit for bit ("[id 3,
// num 1]"); empty when they are equal. Read in blocks of about 1 Mi elements.
std::string multiplier_difference(const InputConfig& config, const ListPart& first, const ListPart& other,
                                  const InputAxes& chosen) {
  h5::Id a = open_input_file(first.path, "input.file '" + first.path + "' (input.file list)");
  h5::Id b = open_input_file(other.path, "input.file '" + other.path + "' (input.file list)");
  const std::vector<hsize_t>& dims = first.mult_dims;
  const hsize_t block = std::max<hsize_t>(1, (hsize_t{1} << 20) / std::max<hsize_t>(1, dims[1]));
  std::vector<double> x, y;
  for (hsize_t row = 0; row < dims[0]; row += block) {
    const hsize_t rows = std::min(block, dims[0] - row);
    read_rows(a.get(), config.multiplier, dims, row, rows, x, first.path);
    read_rows(b.get(), config.multiplier, dims, row, rows, y, other.path);
    if (std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0) continue;
    std::size_t at = 0;
    while (std::memcmp(&x[at], &y[at], sizeof(double)) == 0) ++at;
    const hsize_t r = row + at / dims[1], c = at % dims[1];
    return std::string("[") + axis_name(chosen.multiplier_axes[0]) + " " + std::to_string(r) + ", " +
           axis_name(chosen.multiplier_axes[1]) + " " + std::to_string(c) + "]";
  }
  return {};
}

[[noreturn]] void ambiguous(const InputConfig& config, const std::vector<ListPart>& parts) {
  throw data_error(
      "input.file list: cannot tell whether the files are split along date or along id: they have "
      "the same shape " +
      h5::shape_string(parts.front().disc_dims) + ", each holds the same '" + config.multiplier +
      "', and no date or id coordinates set them apart; keep '" + config.multiplier + "' in '" + parts.front().path +
      "' only for a split along date, or give the files their date "
      "or id coordinates (netCDF dimension scales, as xarray writes them)");
}

}  // namespace

std::string list_where(const ListPart& part, const std::string& key, const std::string& name) {
  return key + ": dataset '" + name + "' in '" + part.path + "' (input.file list)";
}

ListPart inspect_list_file(const InputConfig& config, const std::string& path, const std::vector<ListPart>& earlier) {
  ListPart p;
  p.path = path;
  const std::string what = "input.file '" + path + "' (input.file list)";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw missing_error(what + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw missing_error(what + " is not a regular file");
  for (const ListPart& q : earlier) {
    struct stat qs {};
    if (::stat(q.absolute.c_str(), &qs) == 0 && qs.st_dev == st.st_dev && qs.st_ino == st.st_ino)
      throw config_error("input.file lists '" + path + "' twice (also as '" + q.path + "')");
  }
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) throw missing_error(what + ": " + std::strerror(errno));
  p.absolute = resolved;
  p.stat = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  p.content = "HDF5 file of " + std::to_string(st.st_size) + " bytes, sampled content " +
              sampled_content(path, static_cast<std::uint64_t>(st.st_size));
  // The checks of a single input.file, with this file in their messages.
  InputConfig one = config;
  one.file = path;
  h5::Id file = open_input_file(path, what);
  try {
    take(open_input_dataset(file.get(), one, config.discount, "input.discount", 3), p.disc_dims, p.disc_type,
         p.disc_names);
    if (earlier.empty() || H5Lexists(file.get(), config.multiplier.c_str(), H5P_DEFAULT) > 0)
      take(open_input_dataset(file.get(), one, config.multiplier, "input.multiplier", 2), p.mult_dims, p.mult_type,
           p.mult_names);
  } catch (const Error& e) { throw Error(e.code(), std::string("input.file list: ") + e.what()); }
  return p;
}

Axis choose_list_axis(const InputConfig& config, const std::vector<ListPart>& parts, const InputAxes& chosen,
                      const CoordCompare& coordinates) {
  const bool every_mult =
      std::all_of(parts.begin(), parts.end(), [](const ListPart& p) { return !p.mult_dims.empty(); });
  const bool dates = extents_differ(parts, chosen, Axis::date), ids = extents_differ(parts, chosen, Axis::id);
  if (dates != ids) return dates ? Axis::date : Axis::id;
  // Both differ: refused by check_list_fit, naming the file, along the axis multBy points at.
  if (dates) return every_mult ? Axis::id : Axis::date;
  const CoordAgreement by_date = coordinates(Axis::date), by_id = coordinates(Axis::id);
  if (by_date == CoordAgreement::differ && by_id == CoordAgreement::differ)
    throw data_error("input.file list: the files' date and id coordinates both differ from those of '" +
                     parts.front().path +
                     "': files of a list hold consecutive ranges along one axis, and the same "
                     "coordinates on the others");
  if (by_date == CoordAgreement::equal && by_id == CoordAgreement::equal)
    throw data_error("input.file list: the files have the date and id coordinates of '" + parts.front().path +
                     "': files of a list hold consecutive ranges along date or along id");
  if (by_date == CoordAgreement::differ || by_id == CoordAgreement::equal) return Axis::date;
  if (by_id == CoordAgreement::differ || by_date == CoordAgreement::equal) return Axis::id;
  if (!every_mult) return Axis::date;
  for (std::size_t k = 1; k < parts.size(); ++k)
    if (parts[k].mult_dims != parts.front().mult_dims ||
        !multiplier_difference(config, parts.front(), parts[k], chosen).empty())
      return Axis::id;
  ambiguous(config, parts);
}

void check_list_fit(const InputConfig& config, const std::vector<ListPart>& parts, const InputAxes& chosen,
                    Axis along) {
  const ListPart& first = parts.front();
  int at = 0;  // the split axis's position in the discount dataset
  for (int j = 0; j < 3; ++j)
    if (chosen.axes[j] == along) at = j;
  const std::string list = "input.file list along " + std::string(axis_name(along)) + ": '";
  for (const ListPart& p : parts) {
    for (std::size_t j = 0; j < 3; ++j)
      if (static_cast<int>(j) != at && p.disc_dims[j] != first.disc_dims[j])
        throw data_error(list + p.path + "' has " + std::to_string(p.disc_dims[j]) + " " + axis_name(chosen.axes[j]) +
                         "s in '" + config.discount + "' " + h5::shape_string(p.disc_dims) + " where '" + first.path +
                         "' has " + std::to_string(first.disc_dims[j]));
    if (along == Axis::id && p.mult_dims.empty())
      throw data_error(list + p.path + "' holds no '" + config.multiplier +
                       "': files split along id each hold "
                       "their ids' multBy rows");
    if (H5Tequal(p.disc_type.get(), first.disc_type.get()) <= 0 ||
        (!p.mult_dims.empty() && H5Tequal(p.mult_type.get(), first.mult_type.get()) <= 0))
      throw data_error("input.file list: '" + p.path + "' stores its datasets with another datatype than '" +
                       first.path + "'; all files must agree");
    if (along == Axis::id && p.mult_names != first.mult_names)
      throw data_error("input.file list: '" + p.path + "' names the dimensions of '" + config.multiplier +
                       "' otherwise than '" + first.path + "'");
  }
  const int mult_at = chosen.multiplier_axes[0] == Axis::id ? 0 : 1;  // multBy's id axis
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const ListPart& p = parts[k];
    if (p.mult_dims.empty()) continue;
    const auto m = static_cast<std::size_t>(mult_at);
    if (along == Axis::id &&
        (p.mult_dims[m] != p.disc_dims[static_cast<std::size_t>(at)] || p.mult_dims[1 - m] != first.mult_dims[1 - m]))
      throw data_error(list + p.path + "' holds '" + config.multiplier + "' " + h5::shape_string(p.mult_dims) +
                       " for '" + config.discount + "' " + h5::shape_string(p.disc_dims) +
                       ": each file's multBy holds the rows of its own ids");
    if (along == Axis::date && p.mult_dims != first.mult_dims)
      throw data_error(list + p.path + "' holds '" + config.multiplier + "' " + h5::shape_string(p.mult_dims) +
                       " where '" + first.path + "' holds " + h5::shape_string(first.mult_dims) +
                       ": files split along date hold the same multBy, or only the first one does");
    if (along == Axis::date) {
      const std::string differs = multiplier_difference(config, first, p, chosen);
      if (!differs.empty())
        throw data_error(list + p.path + "' holds a '" + config.multiplier + "' that differs from the one in '" +
                         first.path + "' (first at " + differs +
                         "): files split along date hold the same multBy, "
                         "or only the first one does");
    }
  }
  // The first file's multBy also fits the id split's first ids.
  if (along == Axis::id &&
      (first.mult_dims[static_cast<std::size_t>(mult_at)] != first.disc_dims[static_cast<std::size_t>(at)]))
    throw data_error(list + first.path + "' holds '" + config.multiplier + "' " + h5::shape_string(first.mult_dims) +
                     " for '" + config.discount + "' " + h5::shape_string(first.disc_dims) +
                     ": each file's multBy holds the rows of its own ids");
}

}  // namespace discount
