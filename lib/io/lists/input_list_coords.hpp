// The coordinates of an input.file list, joined as xarray.open_mfdataset
// joins them: each file's own (its discount's dimension scales, else 1-D
// datasets beside it named after the axis, as io/output/output_coords.cpp finds a
// single input's), concatenated along the split axis and equal on the
// others. CF time units that differ between the files (xarray counts each
// file's dates from that file's first date) are re-expressed in a unit
// common to all, from the first file's reference date. The joined
// coordinates are written into the list's virtual file as dimension scales
// of its discount, where the output takes its coordinates from.
#pragma once

#include <hdf5.h>

#include <array>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/lists/input_list_parts.hpp"

namespace discount {

struct ListFiles {
  std::vector<std::string> paths;               // as listed, in order
  std::vector<std::vector<hsize_t>> disc_dims;  // each file's discount shape
  std::string discount;                         // input.discount
  std::array<Axis, 3> axes;                     // the discount's axes
};

// Whether the files' coordinates along `axis` are all equal, differ (also:
// some files have one and others not), or are absent from every file.
// Throws discount::Error (65) for coordinates that cannot be compared
// (another type, calendar or units).
CoordAgreement compare_list_coordinates(const ListFiles& files, Axis axis);

// Writes the joined coordinates into `vds` (the list's virtual file) and
// attaches them to `discount` there: concatenated along `along`, the first
// file's on the other axes, where every file must hold the same. Throws
// discount::Error (65) naming the file that does not fit and the first one.
void write_list_coordinates(const ListFiles& files, Axis along, hid_t vds, hid_t discount);

// The first file's root attributes (title, history, ...) onto `vds`'s root
// and its discount's (units, long_name, ...) onto `discount`.
void copy_list_attributes(const ListFiles& files, hid_t vds, hid_t discount);

}  // namespace discount
