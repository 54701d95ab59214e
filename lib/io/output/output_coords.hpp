// The output as the netCDF-4/CF conventions that xarray reads want it:
// cv's axes are HDF5 dimension scales named after the axes (date, id, num),
// holding the input's coordinates for the selection (copied from the
// input's dimension scales or coordinate datasets, sliced) or, where the
// input has none, the integer index into the input, which keeps the
// selection's offset. discount's attributes (units, long_name, ...) move to
// cv; the file's root gets title, source and history. Written once, when
// `<out>.partial` is created: a resume never touches them.
#pragma once

#include <hdf5.h>

#include <string>

#include "io/records/output_decor.hpp"

namespace discount {

// Decorates `data` (cv, already created in `file`) and the file's root.
// Throws discount::Error when a coordinate cannot be written.
void decorate_output(hid_t file, hid_t data, const OutputDecor& decor);

// Structured provenance on `group` (the output's discount_app group): the
// version, config path, input file, selection ([begin, end) per axis) and
// host, beside the YAML copy the output already keeps there.
void write_provenance(hid_t group, const OutputDecor& decor);

// The CF history line this run adds, newest first, before `previous`.
std::string history_with(const std::string& previous, const std::string& line);

}  // namespace discount
