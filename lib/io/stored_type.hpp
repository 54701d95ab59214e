// cv as stored (output.dtype): the values are always computed in float64;
// with float32 each is rounded once, to nearest, from its float64 product,
// when the slab is written. Reading back widens exactly.
#pragma once

#include <hdf5.h>

#include <cstddef>

#include "config/config.hpp"

namespace discount {

// The HDF5 file type of cv: little-endian IEEE float64 or float32.
hid_t stored_hdf5_type(OutputType type);
// "float64" or "float32".
const char* stored_type_name(OutputType type);

// Rounds values[0..n) to float32 and packs them into the buffer's first
// n * 4 bytes, in order (the float64 values are gone afterwards). Returns
// the packed floats.
float* narrow_in_place(double* values, std::size_t n);

}  // namespace discount
