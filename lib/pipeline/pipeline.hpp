// The streaming engine: reader thread -> ring of staging buffers -> (H2D
// thread -> kernel -> D2H thread, each on its own execution space instance)
// -> writer thread. With the kernel in host space there are no copies and
// the kernel works in place on the staging buffer.
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "config/config.hpp"
#include "io/input.hpp"
#include "io/output.hpp"
#include "plan/plan.hpp"
#include "report/progress.hpp"
#include "report/report.hpp"
#include "resolve/resolve.hpp"

namespace discount {

struct PipelineJob {
  const PipelineSpec* spec = nullptr;   // resolve()'s part for the pipeline
  const Plan* plan = nullptr;
  InputSource* input = nullptr;
  OutputSink* sink = nullptr;
  const std::atomic<int>* stop = nullptr;  // signal number once asked to stop
  bool progress = false;                // periodic progress lines on stdout
  // Called by the writer after every slab with the progress line's figures
  // (in-process callers: the Python module); unset: nothing.
  std::function<void(const ProgressFields&)> on_progress;
};

// The pending slabs' share of one rank: contiguous, sizes differing by at most one.
std::vector<int> rank_share(const std::vector<int>& pending, int rank, int ranks);

// Each rank's figures added up (bytes, slabs) or maximised (seconds: ranks
// work side by side), so rank 0 reports the whole job. Collective under MPI;
// report.stages must name the same stages on every rank (empty_stages()).
void combine_rank_reports(RunReport& report);

// True when compute.space maps to a memory space the host cannot read, so
// the plan needs device buffers and copies.
bool needs_device_copies(Space space);
// "Cuda", "OpenMP", ... for the space that will run the kernel.
std::string execution_space_name(Space space);

// Runs every slab the sink does not already hold. Fills report.stages and the
// slab counts. Throws discount::Error; on a stop request it drains the slabs
// in flight, records them, and returns with report.interrupted set.
void run_pipeline(const PipelineJob& job, RunReport& report);

}  // namespace discount
