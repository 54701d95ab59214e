// What the output file is told about where its numbers came from, so that it
// describes itself (io/output/output_coords.hpp): the input's coordinates and
// attributes, the selection's offsets, and the structured provenance. Kept
// free of HDF5 so the pure resolve step (lib/resolve) can fill it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "config/config.hpp"

namespace discount {

struct OutputDecor {
  std::string input_file;                                     // empty: synthetic input (index coordinates)
  std::string input_dataset;                                  // discount's path in input_file
  std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};  // the file's order (input's and output's)
  Range dates, ids;                                           // the selection, absolute in the input
  std::int64_t nums = 0;
  std::string version;      // "0.9.0 (git abc123)"
  std::string config_path;  // empty: none (config from the command line)
  // The HDF5 file holding the discount whose coordinates and attributes the
  // output takes, when not input_file: an input.file list's virtual file.
  std::string coordinates_file;
  std::string multiplier_dataset;  // multBy's path there: its units join discount's in cv's
};

}  // namespace discount
