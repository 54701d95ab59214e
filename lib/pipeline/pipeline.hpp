// The streaming engine: reader thread -> ring of staging buffers -> (H2D
// thread -> kernel -> D2H thread, each on its own execution space instance)
// -> writer thread. With the kernel in host space there are no copies and
// the kernel works in place on the staging buffer.
#pragma once

#include <atomic>
#include <vector>

#include "config/config.hpp"
#include "io/input.hpp"
#include "io/output.hpp"
#include "plan/plan.hpp"
#include "report/report.hpp"

namespace discount {

struct PipelineJob {
  const Config* config = nullptr;
  const Plan* plan = nullptr;
  InputSource* input = nullptr;
  OutputSink* sink = nullptr;
  Range dates, ids;                     // absolute selection in the source
  const std::atomic<int>* stop = nullptr;  // signal number once asked to stop
  bool progress = false;                // periodic progress lines on stderr
  // Benchmarks of the device path alone: each staging buffer is filled once,
  // then slabs cycle host -> device -> host with no reads or writes.
  bool skip_host_io = false;
  // Under MPI: the slabs still to do are split into `ranks` contiguous runs;
  // this process takes run number `rank`.
  int rank = 0, ranks = 1;
};

// The pending slabs' share of one rank: contiguous, sizes differing by at most one.
std::vector<int> rank_share(const std::vector<int>& pending, int rank, int ranks);

// The stages a run reports, named and empty, in the pipeline's order: read,
// h2d, kernel, d2h, write with device copies; read, kernel, write without.
std::vector<StageStats> pipeline_stages(bool device_copies);

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
