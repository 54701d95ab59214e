// The streaming engine: reader thread -> ring of staging buffers -> (H2D
// thread -> kernel -> D2H thread, each on its own execution space instance)
// -> writer thread. With the kernel in host space there are no copies and
// the kernel works in place on the staging buffer.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "config/config.hpp"
#include "io/input/input.hpp"
#include "io/output/output.hpp"
#include "plan/plan.hpp"
#include "report/progress.hpp"
#include "report/report.hpp"
#include "resolve/resolve.hpp"

namespace discount {

// A slab's box in the buffer's memory order (the file's axis order, `axes`),
// and the multBy strides the kernel indexes it with (kernels/apply.hpp): 0
// along date, so one multBy row serves every date. Used by the pipeline's
// stages and by the in-process multiply that runs on arrays directly.
struct Geometry {
  std::array<std::int64_t, 3> extent;
  std::array<std::int64_t, 3> mult_stride;
  std::int64_t elements() const { return extent[0] * extent[1] * extent[2]; }
};

inline Geometry geometry(const std::array<Axis, 3>& axes, const Slab& slab) {
  Geometry g{};
  g.extent = discount_box({slab.dates.end, slab.ids.end, slab.nums}, axes, slab.dates, slab.ids).count;
  for (int j = 0; j < 3; ++j) g.mult_stride[j] = axes[j] == Axis::date ? 0 : axes[j] == Axis::id ? slab.nums : 1;
  return g;
}

// The writer's figures after each slab it wrote (`done`: once more when the
// writer stops, however the run ends). Whoever shows progress draws them
// (report/progress.hpp); the pipeline prints nothing.
struct WriteProgress {
  int written = 0, total = 0;  // slabs of this rank's pending share
  std::uint64_t bytes = 0;     // written so far
  double seconds = 0.0;        // since the writer started
  bool done = false;
};

struct PipelineJob {
  const PipelineSpec* spec = nullptr;  // resolve()'s part for the pipeline
  const Plan* plan = nullptr;
  InputSource* input = nullptr;
  OutputSink* sink = nullptr;
  const std::atomic<int>* stop = nullptr;              // signal number once asked to stop
  std::function<void(const WriteProgress&)> progress;  // empty: nobody listens
};

// The pending slabs' share of one rank: contiguous, sizes differing by at most one.
std::vector<int> rank_share(const std::vector<int>& pending, int rank, int ranks);

// True when compute.space maps to a memory space the host cannot read, so
// the plan needs device buffers and copies.
bool needs_device_copies(Space space);
// "Cuda", "OpenMP", ... for the space that will run the kernel.
std::string execution_space_name(Space space);

// Runs every slab the sink does not already hold. Fills report.stages and the
// slab counts. Throws discount::Error; on a stop request it drains the slabs
// in flight, records them, and returns with report.interrupted set.
void run_pipeline(const PipelineJob& job, RunReport& report);

// Staging buffers kept from one run to the next in this process
// (pipeline/staging_pool.hpp). keep_staging(true): each run's ring stays
// mapped (and pinned, for a GPU) for the next run to take; false frees it
// and ends keeping. release_kept_staging() frees what is kept now.
void keep_staging(bool keep);
void release_kept_staging();
std::uint64_t kept_staging_bytes();

}  // namespace discount
