// The engine inside another process (the Python module, python/): Kokkos
// started once and ended at exit, a file job run as `discount_app run` runs
// it (report returned, not printed), and a multiply of arrays in memory
// through the same pipeline (io/input/memory_arrays.hpp). The caller owns the stop
// flag (a signal number once it wants the job to stop after the slabs in
// flight) and receives the progress figures after every slab.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/input/memory_arrays.hpp"
#include "report/progress.hpp"
#include "report/report.hpp"

namespace discount::embed {

// Starts Kokkos for this process unless it runs already (the first call);
// the threads follow OMP_NUM_THREADS / the cpuset as for the CLI.
void ensure_kokkos();
// Ends Kokkos if ensure_kokkos() started it (at the process's exit), after
// freeing the staging buffers kept between calls.
void finalize_kokkos();
bool kokkos_started();

// The process keeps each call's staging ring (pinned for a GPU) for the next
// call (pipeline/staging_pool.hpp): pinning 1.5 GB took 0.75 s a call on the
// H200 node. release_buffers() frees what is kept, unpins the arrays pinned
// in place (embed/pinned_arrays.hpp), and returns the bytes of both; the next
// call makes a new ring and keeps it again.
std::uint64_t release_buffers();
std::uint64_t kept_buffer_bytes();

using Progress = std::function<void(const ProgressFields&)>;

// `discount_app run` on a parsed config, quietly; the report as the JSON report holds it.
RunReport run_job(const Config& config, const std::atomic<int>* stop, const Progress& progress);

struct MultiplyRequest {
  // host arrays, or all three device arrays (device: true). disc.pinned, out.pinned: the caller pinned
  // them (pin_array); they are taken as pinned where this process holds their whole range so.
  ArrayRef mult, disc, out;
  bool device_arrays = false;
  std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};
  Space space = Space::device;
  std::optional<MemorySize> device_budget, host_budget;
  std::vector<Axis> parallel_dims{Axis::date, Axis::id, Axis::num};
  std::optional<Axis> chunk_axis;
};

// out = mult * disc, broadcast over dates. Throws discount::Error; a stop
// ends it after the slabs in flight with ExitCode::interrupted.
RunReport multiply(const MultiplyRequest& request, const std::atomic<int>* stop, const Progress& progress);

// Whether this build's default memory space is the host's (no device arrays).
bool device_memory_is_separate();

}  // namespace discount::embed
