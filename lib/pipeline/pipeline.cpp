// The streaming pipeline's entry (pipeline/pipeline.hpp): run_pipeline,
// which picks the execution space and, from memory.staging as resolve() left
// it, the way to run: the staging ring (StagedPipeline,
// pipeline/staged_pipeline.hpp, its stage threads in
// pipeline/stage_threads.hpp) or the piece streamer (PieceStreamer,
// pipeline/piece_streamer.hpp, pipeline/unstaged.hpp and
// pipeline/shared_pieces.hpp); and the staging kept between runs.
#include "pipeline/pipeline.hpp"

#include <Kokkos_Core.hpp>
#include <vector>

#include "pipeline/shared_pieces.hpp"
#include "pipeline/stage_threads.hpp"

namespace discount {

namespace pipeline_detail {
namespace {

template <class ExecSpace>
void run_in(const PipelineJob& job, RunReport& report) {
  if (job.spec->staging == Staging::none) {
    PieceStreamer<ExecSpace> streamer(job, report);
    streamer.run();
  } else {
    StagedPipeline<ExecSpace> pipeline(job, report);
    pipeline.run();
  }
}

}  // namespace
}  // namespace pipeline_detail

std::vector<int> rank_share(const std::vector<int>& pending, int rank, int ranks) {
  const auto n = static_cast<std::int64_t>(pending.size());
  const auto begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  return {pending.begin() + begin, pending.begin() + end};
}

bool needs_device_copies(Space space) {
  return space == Space::device && !pipeline_detail::host_accessible<Kokkos::DefaultExecutionSpace>();
}

std::string execution_space_name(Space space) {
  return space == Space::device ? Kokkos::DefaultExecutionSpace::name() : Kokkos::DefaultHostExecutionSpace::name();
}

void run_pipeline(const PipelineJob& job, RunReport& report) {
  if (job.spec->space == Space::device)
    pipeline_detail::run_in<Kokkos::DefaultExecutionSpace>(job, report);
  else
    pipeline_detail::run_in<Kokkos::DefaultHostExecutionSpace>(job, report);
}

namespace {
using KeptPinned = pipeline_detail::PinnedBlock<PinnedHostSpace>;
}  // namespace

void keep_staging(bool keep) {
  pipeline_detail::staging_pool<KeptPinned>().set_keep(keep);
  pipeline_detail::staging_pool<HostPages>().set_keep(keep);
}

void release_kept_staging() {
  pipeline_detail::staging_pool<KeptPinned>().clear();
  pipeline_detail::staging_pool<HostPages>().clear();
}

std::uint64_t kept_staging_bytes() {
  return pipeline_detail::staging_pool<KeptPinned>().kept_bytes() +
         pipeline_detail::staging_pool<HostPages>().kept_bytes();
}

}  // namespace discount
