// The input a job names: input.synthetic, one HDF5 file (input.file), or a
// list of files read as one (io/lists/input_list.hpp). The choice lives here,
// above io/input, so the single-file input never names the list built on it.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "io/input/input.hpp"

namespace discount {

// Opens and validates (existence, HDF5-ness, datasets, rank, dtype, shapes,
// sub-ranges; a list's files each as one input is, then how they fit).
// Throws discount::Error with the documented codes.
std::unique_ptr<InputSource> open_input(const InputConfig& config);

}  // namespace discount
