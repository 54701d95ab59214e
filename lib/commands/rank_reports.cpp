#include "commands/rank_reports.hpp"

#include <cstdint>

#include "ranks/ranks.hpp"

namespace discount {

void combine_rank_reports(RunReport& report) {
  if (!ranks::multi()) return;
  for (auto& stage : report.stages) {
    ranks::sum(stage.bytes);
    stage.seconds = ranks::max(stage.seconds);
    std::uint64_t slabs = static_cast<std::uint64_t>(stage.slabs);
    ranks::sum(slabs);
    stage.slabs = static_cast<int>(slabs);
  }
  ranks::sum(report.input_bytes);
  ranks::sum(report.output_bytes);
  std::uint64_t run = static_cast<std::uint64_t>(report.slabs_run);
  ranks::sum(run);
  report.slabs_run = static_cast<int>(run);
  report.device_path_seconds = ranks::max(report.device_path_seconds);
  report.any_stage_seconds = ranks::max(report.any_stage_seconds);
}

}  // namespace discount
