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
  // Sweep the ranges' boundaries; between two, the latest run covering it.
  std::vector<std::int64_t> cuts;
  for (const RunRange& r : history.ranges) {
    cuts.push_back(r.begin);
    cuts.push_back(r.end);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<RunRange> sorted = history.ranges;
  std::sort(sorted.begin(), sorted.end(), [](const RunRange& a, const RunRange& b) { return a.begin < b.begin; });
  std::multimap<std::int64_t, int> open;  // end -> run, of the ranges that began at or before the cut
  std::size_t next = 0;
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
    const std::int64_t u = cuts[c], end = cuts[c + 1];
    while (next < sorted.size() && sorted[next].begin <= u) {
      open.emplace(sorted[next].end, sorted[next].run);
      ++next;
    }
    open.erase(open.begin(), open.upper_bound(u));  // ranges that ended by u
    if (open.empty()) continue;
    int who = -1;
    for (const auto& [stop, run] : open) who = std::max(who, run);
    auto [it, added] = runs.try_emplace(who);
    if (added) it->second.record.run = who;
    JobRun& run = it->second;
    if (!run.units.empty() && run.units.back().second == u)
      run.units.back().second = end;
    else
      run.units.emplace_back(u, end);
    run.unit_count += end - u;
  }
  std::vector<JobRun> ordered;
  for (auto& [number, run] : runs) {
    run.output_bytes = static_cast<std::uint64_t>(run.unit_count) * geometry.output_bytes_per_unit;
    run.input_bytes += static_cast<std::uint64_t>(run.unit_count) * geometry.input_bytes_per_unit;
    // A slab is this run's when one of its unit ranges holds the whole slab.
    for (std::size_t s = 0; s < geometry.slab_units.size(); ++s) {
      const auto [b, e] = geometry.slab_units[s];
      const auto holds = [&](const UnitRange& r) { return r.first <= b && e <= r.second; };
      if (std::any_of(run.units.begin(), run.units.end(), holds)) run.slabs.push_back(static_cast<int>(s));
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
  // Bytes as stored on disk: the inputs' types and output.dtype.
  const auto unit_elements = static_cast<std::uint64_t>((by_date ? r.ids : r.dates) * r.nums);
  g.output_bytes_per_unit = unit_elements * r.output_bytes;
  g.input_bytes_per_unit = unit_elements * r.input_bytes +
                           (plan.mult_per_slab ? static_cast<std::uint64_t>(r.nums) * r.mult_input_bytes : 0);
  g.resident_input_bytes = plan.mult_per_slab ? 0 : plan.mult_read_bytes();
  return g;
}

}  // namespace discount
