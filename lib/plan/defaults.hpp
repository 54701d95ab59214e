// Defaults that follow the data: the slab size memory.max_slab: auto takes,
// and how a plan's slabs sit in the input file (the contiguous runs one slab
// reads), which memory.chunk_axis: auto weighs. Pure arithmetic on a Plan.
#pragma once

#include <array>
#include <cstdint>

#include "common/axis.hpp"
#include "plan/plan.hpp"

namespace discount {

// memory.max_slab: auto. A job of `job_bytes` of discount gets about
// kAutoSlabs slabs, so reads, the kernel and writes overlap from the second
// slab on and the staging ring (pipeline_depth slabs, first touched once)
// stays a small share of the job; never under kAutoSlabMin (large pieces
// keep positional and O_DIRECT I/O efficient) nor over kAutoSlabMax.
constexpr std::int64_t kAutoSlabs = 16;
constexpr std::uint64_t kAutoSlabMin = std::uint64_t{16} << 20;
constexpr std::uint64_t kAutoSlabMax = std::uint64_t{256} << 20;
// The staging ring is made ready while the first slabs move: pinned
// (page-locked) with copies to a GPU, its fresh pages touched otherwise.
// When the runtime's allocator pinned it, that held back the GPU stages'
// copies and launches: a split job's ring of 12 x 256 MiB took its H2D from
// 53 to 17 GB/s on the H200 node, 85 MiB slabs ran the job 1.4x faster. In
// host memory the first touch of a 2.4 GB ring took 1.1 s beside the reads
// and writes: one-date slabs (a 1.2 GB ring) ran 20 GB on tmpfs in 2.30 s
// against 2.54-2.77 s (docs/config.md). So `ring_buffers` (0: not counted)
// x the slab stays within kAutoRing, the slab never under kAutoSlabMin.
constexpr std::uint64_t kAutoRing = std::uint64_t{1} << 30;
std::uint64_t auto_max_slab(std::uint64_t job_bytes, int ring_buffers = 0);
// The same under memory.staging: none, where no ring holds slabs and each of
// `threads` threads moves whole slabs of its own: about kSlabsPerThread
// slabs each, so the threads finish within a small slab of each other.
constexpr std::int64_t kSlabsPerThread = 8;
std::uint64_t auto_max_slab_unstaged(std::uint64_t job_bytes, int threads);

// How one full slab of a plan lies in the input's discount dataset: the
// bytes of each contiguous run a positional read moves, and how many runs.
struct SlabReadShape {
  std::uint64_t run_bytes = 0;
  std::uint64_t runs = 0;
};
// `file_axes` is the dataset's axis order; `source` the full extents of
// date, id and num in the file (the plan covers a selection of them).
SlabReadShape slab_read_shape(const Plan& plan, const std::array<Axis, 3>& file_axes,
                              const std::array<std::int64_t, 3>& source);

// Runs at least this long read at the storage's streaming rate; shorter runs
// pay a seek or a request each (4 KiB-run reads of a transposed layout ran 5
// to 17 times slower than contiguous ones, docs/performance.md).
constexpr std::uint64_t kEfficientRun = std::uint64_t{1} << 20;

}  // namespace discount
