// Knobs of the kernel families that only the C++ benchmark (benchmarks/) and
// the kernel unit tests turn: the app always runs the defaults. They live
// apart from Slicing, which holds only what the configuration decides
// (compute.parallel_dims and compute.tile). Pure: no Kokkos.
#pragma once

#include <algorithm>
#include <cstdint>

namespace discount::detail {

struct Tuning {
  // [id, num] over a [date][id][num] slab may run as 16-byte pairs of the
  // (id, num) row on GPUs (detail/row_pairs.hpp); benchmarks turn it off to
  // show the plain MDRange, and vary the chunks and groups.
  bool allow_row_pairs = true;
  std::int64_t row_pairs_chunk = 2;  // dates per thread; 0: all of the slab's dates
  std::int64_t row_pairs_group = 0;  // pairs per group; 0: row_pairs_auto_group (the GPU's L2)
  // Host backends run their own loops (detail/host_loops.hpp: each thread takes one equal contiguous share of the
  // slab, or of the parallel dims' tiles when a tile is given); false runs the generic MDRange functor.
  bool host_loops = true;
  std::int64_t host_column = 0;  // elements per column tile of the host loops; 0: auto (kHostColumn)
  // Non-temporal stores on a host: -1 auto (out of place, above a quarter of the LLC), 0 never, 1 always out of place,
  // 2 in place too.
  int host_streaming_stores = -1;
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

}  // namespace discount::detail
