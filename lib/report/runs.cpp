#include "report/runs.hpp"

#include <algorithm>
#include <map>

#include "plan/plan.hpp"

namespace discount {

std::vector<JobRun> job_runs(const RunHistory& history, const RunGeometry& geometry) {
  std::map<int, JobRun> runs;
  for (const auto& record : history.records) {
    if (record.run <= 0) continue;
    JobRun& run = runs[record.run];
    run.record = record;
    run.input_bytes = static_cast<std::uint64_t>(std::max(record.ranks, 1)) * geometry.resident_input_bytes;
  }
  const auto units = static_cast<std::int64_t>(history.done.size());
  for (std::int64_t u = 0; u < units;) {
    const auto at = static_cast<std::size_t>(u);
    if (!history.done[at]) {
      ++u;
      continue;
    }
    const auto run_of = [&](std::size_t unit) { return unit < history.unit_run.size() ? history.unit_run[unit] : 0; };
    const int who = run_of(at);
    std::int64_t end = u + 1;
    while (end < units && history.done[static_cast<std::size_t>(end)] && run_of(static_cast<std::size_t>(end)) == who)
      ++end;
    auto [it, added] = runs.try_emplace(who);
    if (added) it->second.record.run = who;
    JobRun& run = it->second;
    run.units.emplace_back(u, end);
    run.unit_count += end - u;
    u = end;
  }
  std::vector<JobRun> ordered;
  for (auto& [number, run] : runs) {
    run.output_bytes = static_cast<std::uint64_t>(run.unit_count) * geometry.output_bytes_per_unit;
    run.input_bytes += static_cast<std::uint64_t>(run.unit_count) * geometry.input_bytes_per_unit;
    // A slab is this run's when one of its unit ranges holds the whole slab.
    for (std::size_t s = 0; s < geometry.slab_units.size(); ++s) {
      const auto [b, e] = geometry.slab_units[s];
      const auto holds = [&](const UnitRange& r) { return r.first <= b && e <= r.second; };
      if (std::any_of(run.units.begin(), run.units.end(), holds))
        run.slabs.push_back(static_cast<int>(s));
    }
    ordered.push_back(std::move(run));
  }
  return ordered;
}

RunGeometry run_geometry(const Plan& plan) {
  RunGeometry g;
  const PlanRequest& r = plan.request;
  const bool by_date = r.chunk_axis == Axis::date;
  for (const auto& slab : plan.slabs)
    g.slab_units.emplace_back(by_date ? slab.dates.begin : slab.ids.begin, by_date ? slab.dates.end : slab.ids.end);
  const std::uint64_t element = r.element_bytes;
  g.output_bytes_per_unit = static_cast<std::uint64_t>((by_date ? r.ids : r.dates) * r.nums) * element;
  g.input_bytes_per_unit =
      g.output_bytes_per_unit + (plan.mult_per_slab ? static_cast<std::uint64_t>(r.nums) * element : 0);
  g.resident_input_bytes = plan.mult_per_slab ? 0 : plan.mult_bytes;
  return g;
}

}  // namespace discount
