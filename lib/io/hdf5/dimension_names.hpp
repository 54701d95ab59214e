// netCDF-4 dimension names: the HDF5 dimension scales attached to a dataset
// (its DIMENSION_LIST attribute, as netCDF-4, xarray, h5netcdf and h5py's
// dims[j].attach_scale write it) name its axes, and fill in input.axes and
// input.multiplier_axes when the config does not set them.
#pragma once

#include <hdf5.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace discount {

// The name of each axis's first attached dimension scale ("" where none):
// the scale's NAME attribute, or the scale dataset's own name where NAME is
// netCDF's placeholder for a dimension without a coordinate variable.
std::vector<std::string> dimension_names(hid_t dataset);

// The path of the first dimension scale attached to axis `dim` of `data`
// ("" where none), for reopening it by name (the id HDF5's iteration hands
// over is closed after the call).
std::string attached_scale(hid_t data, unsigned dim);

// "date" for date, dates, time, times, day, days; "id" for id, ids; "num"
// for num, nums (case-insensitive). Empty: not recognised.
std::optional<Axis> axis_of_dimension(const std::string& name);
extern const char* const kRecognisedDimensionNames;

// The axes the input is read with. `disc_names`/`mult_names` from
// dimension_names() (empty vectors: none); `disc_dims`/`mult_dims` the
// shapes; `disc_where`/`mult_where` name the datasets for messages. Throws
// discount::Error (65) on a conflict between the names and a given key, and on
// names of which only some are recognised where the key is not set.
struct InputAxes {
  std::array<Axis, 3> axes;
  std::array<Axis, 2> multiplier_axes;  // {id, num} or {num, id}
  std::string axes_from;                // "input.axes", "dimension names" or "default"
  std::string multiplier_from;          // "input.multiplier_axes", "dimension names", "shape" or "default"
};
InputAxes choose_input_axes(const InputConfig& config, const std::vector<std::string>& disc_names,
                            const std::vector<std::string>& mult_names, const std::vector<hsize_t>& disc_dims,
                            const std::vector<hsize_t>& mult_dims, const std::string& disc_where,
                            const std::string& mult_where);

std::string axes_text(const Axis* axes, int count);  // "[date, id, num]"

// The tail of a "shapes do not broadcast" message: "; input.axes: [id, date,
// num] would fit", "; multBy fits only transposed: input.multiplier_axes:
// [num, id] would fit", or empty when no order fits.
std::string fitting_axes_hint(const std::vector<hsize_t>& disc_dims, const std::vector<hsize_t>& mult_dims,
                              const std::array<Axis, 3>& axes, const std::array<Axis, 2>& multiplier_axes,
                              const std::string& multiplier);

}  // namespace discount
