// compute.parallel_dims and compute.tile, translated from axis names to the
// slab buffer's memory positions (the file's axis order). Pure. The kernel
// families' benchmark-only knobs are kernels/detail/tuning.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/launch_limits.hpp"
#include "common/axis.hpp"

namespace discount {

struct Slicing {
  std::array<bool, 3> parallel{true, true, true};  // by memory position
  std::array<std::int64_t, 3> tile{0, 0, 0};       // by memory position; 0: auto
  int rank() const { return int(parallel[0]) + int(parallel[1]) + int(parallel[2]); }
  int mask() const { return int(parallel[0]) | int(parallel[1]) << 1 | int(parallel[2]) << 2; }
  std::string describe(const std::array<Axis, 3>& axes) const;
};

inline Slicing make_slicing(const std::array<Axis, 3>& axes, const std::vector<Axis>& parallel_dims,
                            const std::vector<std::int64_t>& tile) {
  Slicing s;
  s.parallel = {false, false, false};
  for (std::size_t p = 0; p < parallel_dims.size(); ++p)
    for (int j = 0; j < 3; ++j)
      if (axes[j] == parallel_dims[p]) {
        s.parallel[j] = true;
        if (!tile.empty()) s.tile[j] = tile[p];
      }
  return s;
}

inline std::string Slicing::describe(const std::array<Axis, 3>& axes) const {
  std::string text = "parallel over";
  for (int j = 0; j < 3; ++j)
    if (parallel[j]) text += std::string(" ") + axis_name(axes[j]) + (tile[j] ? "/" + std::to_string(tile[j]) : "");
  std::string serial;
  for (int j = 0; j < 3; ++j)
    if (!parallel[j]) serial += std::string(" ") + axis_name(axes[j]);
  if (!serial.empty()) text += ", serial loop over" + serial;
  return text;
}

}  // namespace discount
