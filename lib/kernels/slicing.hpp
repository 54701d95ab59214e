// compute.parallel_dims and compute.tile, translated from axis names to the
// slab buffer's memory positions (the file's axis order). Pure.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/axis.hpp"

namespace discount {

// CUDA's limit on blockDim.z, which a rank-3 MDRange tile's last entry
// becomes on a GPU (kernels/apply.hpp); resolve() refuses a user tile above it.
constexpr std::int64_t kMaxBlockZ = 64;

struct Slicing {
  std::array<bool, 3> parallel{true, true, true};  // by memory position
  std::array<std::int64_t, 3> tile{0, 0, 0};       // by memory position; 0: auto
  // [id, num] over a [date][id][num] slab may run as 16-byte pairs of the
  // (id, num) row on GPUs (kernels/apply.hpp); benchmarks turn it off to show
  // the plain MDRange, and vary the chunks and groups.
  bool allow_row_pairs = true;
  std::int64_t row_pairs_chunk = 2;  // dates per thread; 0: all of the slab's dates
  std::int64_t row_pairs_group = 0;  // pairs per group; 0: row_pairs_auto_group (the GPU's L2)
  // Host backends run their own loops (kernels/apply.hpp: each thread takes one equal contiguous share of the
  // slab, or of the parallel dims' tiles when a tile is given); false runs the generic MDRange functor, for benchmarks.
  bool host_loops = true;
  std::int64_t host_column = 0;   // elements per column tile of the host loops; 0: auto (65536)
  // Non-temporal stores on a host: -1 auto (out of place, above the LLC size), 0 never, 1 always out of place,
  // 2 in place too (benchmarks).
  int host_streaming_stores = -1;
  int rank() const { return int(parallel[0]) + int(parallel[1]) + int(parallel[2]); }
  int mask() const { return int(parallel[0]) | int(parallel[1]) << 1 | int(parallel[2]) << 2; }
  std::string describe(const std::array<Axis, 3>& axes) const;
};

// Pairs per group on the row-pairs path: the largest power of two (at least
// 1024) whose working set between two visits of the same multBy pair fits in
// 40% of L2. Per pair that set is 16 B of multBy plus 32 B per date of the
// chunk (discount read, cv written), the latter counted twice as a margin.
// Larger groups lose speed once a group's multBy no longer stays in L2
// (docs/performance.md has the measured groups).
inline std::int64_t row_pairs_auto_group(std::int64_t l2_bytes, std::int64_t chunk) {
  const std::int64_t per_pair = 16 * (4 * std::max<std::int64_t>(chunk, 1) + 1);
  std::int64_t group = 1024;
  while (2 * group * per_pair <= l2_bytes * 2 / 5) group *= 2;
  return group;
}

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
