// What both ways of running a job start from (pipeline/staged_pipeline.hpp,
// pipeline/piece_streamer.hpp derive from it): the job's parts, the shared
// state (pipeline/pipeline_state.hpp), the non-finite scan, the slabs this
// rank runs and the report's figures at the end.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "common/axis.hpp"
#include "common/range.hpp"
#include "kernels/features.hpp"
#include "pipeline/nonfinite_scan.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_state.hpp"
#include "pipeline/stage_parts.hpp"
#include "plan/stages.hpp"

namespace discount::pipeline_detail {

class PipelineContext {
 public:
  PipelineContext(const PipelineContext&) = delete;
  PipelineContext& operator=(const PipelineContext&) = delete;

 protected:
  PipelineContext(const PipelineJob& job, RunReport& report)
      : job_(job),
        spec_(*job.spec),
        plan_(*job.plan),
        report_(report),
        state_(job),
        axes_(job.input->axes()),
        scan_(spec_, plan_.request.nums, *job.input) {
    require_kernel_compiled_in(spec_.kernel);
  }
  ~PipelineContext() = default;

  // The slabs the sink does not hold yet, this rank's share of them, in the
  // sink's write order; the report's slab counts.
  std::vector<int> pending_slabs() {
    std::vector<int> pending;
    for (const auto& slab : plan_.slabs)
      if (!job_.sink->slab_done(slab)) pending.push_back(slab.index);
    report_.slabs_total = static_cast<int>(plan_.slabs.size());
    report_.slabs_skipped = report_.slabs_total - static_cast<int>(pending.size());
    pending = job_.sink->write_order(rank_share(pending, spec_.rank, spec_.ranks));
    state_.set_pending(static_cast<int>(pending.size()));
    return pending;
  }

  // What each way of running adds to the report's figures.
  struct RunFigures {
    std::uint64_t staging_bytes = 0, staging_reused_bytes = 0;  // the staging ring, made ready while streaming
    double staging_seconds = 0.0;
    Clock::time_point first_upload{}, last_download{};  // the ring's device path (a GPU)
  };
  // The stages' counters into the report, after the threads joined.
  void report_figures(bool copies, const RunFigures& run) {
    report_.stages.clear();
    for (Stage stage : pipeline_stages(copies)) report_.stages.push_back(state_.stats(stage));
    report_.slabs_run = state_.stats(Stage::write).slabs;
    report_.input_bytes = state_.stats(Stage::read).bytes;
    report_.output_bytes = state_.stats(Stage::write).bytes;
    report_.interrupted = state_.stats(Stage::write).slabs < state_.pending();
    if (copies && state_.stats(Stage::d2h).slabs > 0)
      report_.device_path_seconds = std::chrono::duration<double>(run.last_download - run.first_upload).count();
    report_.any_stage_seconds = state_.figures().any_stage_seconds();
    report_.staging_bytes = run.staging_bytes;
    report_.staging_reused_bytes = run.staging_reused_bytes;
    report_.staging_seconds = run.staging_seconds;
  }

  Range absolute(Range r, Range selection) const { return {selection.begin + r.begin, selection.begin + r.end}; }

  const PipelineJob& job_;
  const PipelineSpec& spec_;
  const Plan& plan_;
  RunReport& report_;
  PipelineState state_;
  const std::array<Axis, 3> axes_;
  const NonfiniteScan scan_;
};

}  // namespace discount::pipeline_detail
