// cv as stored (output.dtype): the values are always computed in float64;
// with float32 each is rounded once, to nearest, from its float64 product,
// when the slab is written. Reading back widens exactly.
#pragma once

#include <cstdint>

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
// the packed floats. With `overflow`, the index of the first finite value
// that became ±inf (float32's range is about ±3.4e38), or -1, and its value.
struct Overflow {
  std::int64_t index = -1;
  double value = 0;
};
float* narrow_in_place(double* values, std::size_t n, Overflow* overflow = nullptr);

}  // namespace discount
