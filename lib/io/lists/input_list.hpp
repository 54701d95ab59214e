// input.file as a list: files holding consecutive ranges along date or id,
// read as one input through an HDF5 virtual dataset written to a private
// temporary folder (removed when the input closes). Each file is checked
// first, so errors name the listed file, axis and size, never the virtual one.
#pragma once

#include <functional>
#include <memory>

#include "io/input/input.hpp"

namespace discount {

// Opens one HDF5 file as an input (open_hdf5_input, handed in by open_input):
// the list reads its virtual file through it and adds the list's own checks.
using OpenInputFile = std::function<std::unique_ptr<InputSource>(const InputConfig&)>;

// Split along date: multBy in the first file only. Split along id: every file
// holds the multBy rows of its own ids. Shapes agree on the other axes,
// datatypes agree. Throws discount::Error (65, 66) naming the file.
std::unique_ptr<InputSource> open_input_list(const InputConfig& config, const OpenInputFile& open_file);

}  // namespace discount
