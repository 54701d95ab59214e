#include "io/hdf5/dimension_names.hpp"

#include <hdf5_hl.h>

#include <algorithm>
#include <cctype>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"

namespace discount {

std::string attached_scale(hid_t data, unsigned dim) {
  if (H5DSget_num_scales(data, dim) <= 0) return {};
  std::string path;
  auto visit = [](hid_t, unsigned, hid_t scale, void* out) -> herr_t {
    const ssize_t n = H5Iget_name(scale, nullptr, 0);
    if (n <= 0) return 0;
    std::string name(static_cast<std::size_t>(n) + 1, '\0');
    H5Iget_name(scale, name.data(), name.size());
    name.resize(static_cast<std::size_t>(n));
    *static_cast<std::string*>(out) = name;
    return 1;
  };
  int index = 0;
  H5DSiterate_scales(data, dim, &index, visit, &path);
  return path;
}

const char* const kRecognisedDimensionNames =
    "date|dates|time|times|day|days for date, id|ids for id, num|nums for num (any case)";

namespace {

// netCDF-4 writes this NAME for a dimension that has no coordinate variable;
// the dimension's name is then the scale dataset's own name.
constexpr const char* kNetcdfPlaceholder = "This is a netCDF dimension but not a netCDF variable";

std::string object_base_name(hid_t object) {
  const ssize_t length = H5Iget_name(object, nullptr, 0);
  if (length <= 0) return {};
  std::vector<char> text(static_cast<std::size_t>(length) + 1, '\0');
  H5Iget_name(object, text.data(), text.size());
  std::string path(text.data());
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string names_text(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + (n.empty() ? std::string("(none)") : n);
  return "(" + text + ")";
}

// Axes for the names when every one is recognised and they are distinct.
template <std::size_t N>
std::optional<std::array<Axis, N>> named_axes(const std::vector<std::string>& names) {
  if (names.size() != N) return std::nullopt;
  std::array<Axis, N> axes{};
  for (std::size_t j = 0; j < N; ++j) {
    const auto axis = axis_of_dimension(names[j]);
    if (!axis) return std::nullopt;
    for (std::size_t i = 0; i < j; ++i)
      if (axes[i] == *axis) return std::nullopt;
    axes[j] = *axis;
  }
  return axes;
}

bool any_recognised(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& n) { return axis_of_dimension(n).has_value(); });
}
bool all_empty(const std::vector<std::string>& names) {
  return std::all_of(names.begin(), names.end(), [](const std::string& n) { return n.empty(); });
}

}  // namespace

std::string axes_text(const Axis* axes, int count) {
  std::string text = "[";
  for (int j = 0; j < count; ++j) text += std::string(j ? ", " : "") + axis_name(axes[j]);
  return text + "]";
}

std::vector<std::string> dimension_names(hid_t dataset) {
  h5::Id space = h5::dataspace(H5Dget_space(dataset));
  const int rank = space ? H5Sget_simple_extent_ndims(space.get()) : 0;
  std::vector<std::string> names(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank <= 0 || H5Aexists(dataset, "DIMENSION_LIST") <= 0) return names;
  h5::Id attr = h5::attribute(H5Aopen(dataset, "DIMENSION_LIST", H5P_DEFAULT));
  h5::Id attr_space = attr ? h5::dataspace(H5Aget_space(attr.get())) : h5::Id{};
  if (!attr_space || H5Sget_simple_extent_npoints(attr_space.get()) != rank) return names;
  const hid_t ref_type = H5T_STD_REF_OBJ;
  h5::Id mem_type = h5::datatype(H5Tvlen_create(ref_type));
  std::vector<hvl_t> lists(static_cast<std::size_t>(rank));
  if (!mem_type || H5Aread(attr.get(), mem_type.get(), lists.data()) < 0) return names;
  for (int j = 0; j < rank; ++j) {
    const hvl_t& list = lists[static_cast<std::size_t>(j)];
    if (list.len == 0 || !list.p) continue;
    hobj_ref_t ref = static_cast<const hobj_ref_t*>(list.p)[0];
    const hid_t scale = H5Rdereference2(dataset, H5P_DEFAULT, H5R_OBJECT, &ref);
    if (scale < 0) continue;
    h5::Id scale_id = h5::dataset(scale);
    std::string name = h5::read_string_attribute(scale_id.get(), "NAME");
    if (name.empty() || name.rfind(kNetcdfPlaceholder, 0) == 0) name = object_base_name(scale_id.get());
    names[static_cast<std::size_t>(j)] = name;
  }
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mem_type.get(), attr_space.get(), H5P_DEFAULT, lists.data());
#else
  H5Dvlen_reclaim(mem_type.get(), attr_space.get(), H5P_DEFAULT, lists.data());
#endif
  return names;
}

std::optional<Axis> axis_of_dimension(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "date" || n == "dates" || n == "time" || n == "times" || n == "day" || n == "days") return Axis::date;
  if (n == "id" || n == "ids") return Axis::id;
  if (n == "num" || n == "nums") return Axis::num;
  return std::nullopt;
}

InputAxes choose_input_axes(const InputConfig& config, const std::vector<std::string>& disc_names,
                            const std::vector<std::string>& mult_names, const std::vector<hsize_t>& disc_dims,
                            const std::vector<hsize_t>& mult_dims, const std::string& disc_where,
                            const std::string& mult_where) {
  InputAxes chosen{config.axes, {Axis::id, Axis::num}, config.axes_given ? "input.axes" : "default", "default"};
  // The discount's axes.
  const auto named = named_axes<3>(disc_names);
  if (named) {
    if (config.axes_given && *named != config.axes)
      throw data_error(disc_where + " has the dimension names " + names_text(disc_names) + ", which say " +
                       axes_text(named->data(), 3) + ", but input.axes is " + axes_text(config.axes.data(), 3) +
                       ": remove input.axes, or correct it or the file's dimension names");
    if (!config.axes_given) {
      chosen.axes = *named;
      chosen.axes_from = "dimension names";
    }
  } else if (!config.axes_given && any_recognised(disc_names)) {
    throw data_error(disc_where + " has the dimension names " + names_text(disc_names) +
                     ", which do not name date, id and num once each (recognised: " + kRecognisedDimensionNames +
                     "): set input.axes, or rename the dimensions");
  }
  // The multiplier's: given, named, or from its shape against the discount's ids and nums.
  std::int64_t ids = 0, nums = 0;
  for (int j = 0; j < 3 && disc_dims.size() == 3; ++j) {
    if (chosen.axes[j] == Axis::id) ids = static_cast<std::int64_t>(disc_dims[j]);
    if (chosen.axes[j] == Axis::num) nums = static_cast<std::int64_t>(disc_dims[j]);
  }
  const auto mult_named = named_axes<2>(mult_names);
  const bool mult_named_ok = mult_named && (*mult_named)[0] != Axis::date && (*mult_named)[1] != Axis::date;
  if (config.multiplier_axes) {
    chosen.multiplier_axes = *config.multiplier_axes;
    chosen.multiplier_from = "input.multiplier_axes";
    if (mult_named_ok && *mult_named != *config.multiplier_axes)
      throw data_error(mult_where + " has the dimension names " + names_text(mult_names) + ", which say " +
                       axes_text(mult_named->data(), 2) + ", but input.multiplier_axes is " +
                       axes_text(config.multiplier_axes->data(), 2) +
                       ": remove input.multiplier_axes, or correct it or the file's dimension names");
  } else if (mult_named_ok) {
    chosen.multiplier_axes = *mult_named;
    chosen.multiplier_from = "dimension names";
  } else if (!all_empty(mult_names) && any_recognised(mult_names)) {
    throw data_error(mult_where + " has the dimension names " + names_text(mult_names) +
                     ", which do not name id and num once each (recognised: " + kRecognisedDimensionNames +
                     "): set input.multiplier_axes, or rename the dimensions");
  } else if (mult_dims.size() == 2 && ids != nums && static_cast<std::int64_t>(mult_dims[0]) == nums &&
             static_cast<std::int64_t>(mult_dims[1]) == ids) {
    // Only the transposed orientation fits the discount's ids and nums.
    chosen.multiplier_axes = {Axis::num, Axis::id};
    chosen.multiplier_from = "shape";
  }
  return chosen;
}

// Orders that would relabel the axes are only suggested under multBy's own
// orientation first: a multBy that fits only transposed is said to be
// transposed (input.multiplier_axes), never fixed by calling ids nums.
std::string fitting_axes_hint(const std::vector<hsize_t>& disc_dims, const std::vector<hsize_t>& mult_dims,
                              const std::array<Axis, 3>& axes, const std::array<Axis, 2>& multiplier_axes,
                              const std::string& multiplier) {
  const bool transposed = multiplier_axes[0] == Axis::num;
  const auto fits_under = [&](const std::array<Axis, 3>& order, bool flip) {
    std::int64_t ids = 0, nums = 0;
    for (int j = 0; j < 3; ++j) {
      if (order[j] == Axis::id) ids = static_cast<std::int64_t>(disc_dims[j]);
      if (order[j] == Axis::num) nums = static_cast<std::int64_t>(disc_dims[j]);
    }
    const int id_at = transposed != flip ? 1 : 0;
    return ids == static_cast<std::int64_t>(mult_dims[id_at]) &&
           nums == static_cast<std::int64_t>(mult_dims[1 - id_at]);
  };
  const std::string other = transposed ? "[id, num]" : "[num, id]";
  if (fits_under(axes, true))
    return "; " + multiplier + " fits only transposed: input.multiplier_axes: " + other + " would fit";
  for (bool flip : {false, true}) {
    std::array<Axis, 3> order{Axis::date, Axis::id, Axis::num};
    std::string fits;
    do {
      if (order == axes || !fits_under(order, flip)) continue;
      fits += std::string(fits.empty() ? "" : " or ") + axes_text(order.data(), 3);
    } while (std::next_permutation(order.begin(), order.end()));
    if (!fits.empty())
      return "; input.axes: " + fits + (flip ? " with input.multiplier_axes: " + other : std::string()) + " would fit";
  }
  return {};
}

}  // namespace discount
