// The runs that wrote a job's output. A killed or stopped job is finished by
// later runs (resume); the output file keeps a record of each run and, per
// done range of its chunk axis, which run wrote it (io/records/unit_record.hpp). Joined here
// into what each run did, so a resumed run's report covers the whole job.
// Pure, but for run_geometry's use of the plan.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/records/run_history.hpp"

namespace discount {

struct Plan;

using UnitRange = std::pair<std::int64_t, std::int64_t>;  // [begin, end) along the chunk axis

// What turns a run's units into bytes and slabs.
struct RunGeometry {
  std::vector<UnitRange> slab_units;        // the current plan's slabs, by index
  std::uint64_t output_bytes_per_unit = 0;  // cv bytes
  std::uint64_t input_bytes_per_unit = 0;   // discount bytes (and the multBy rows that travel with them)
  std::uint64_t resident_input_bytes = 0;   // the resident multBy, read once by each rank of each run
};

struct JobRun {
  RunRecord record;
  std::vector<UnitRange> units;  // the units it wrote that are recorded as done
  std::int64_t unit_count = 0;
  std::vector<int> slabs;  // the current plan's slabs whose every unit it wrote
  std::uint64_t output_bytes = 0, input_bytes = 0;
};

// Every recorded run, in run order, with the units the done ranges hold and
// that it wrote. A unit in several ranges (a slab recomputed whole by a later
// run) is the latest run's. A done unit whose run has no record goes to a run
// numbered 0. Units are attributed to one run each, so the runs' units are
// disjoint and together are every done unit.
std::vector<JobRun> job_runs(const RunHistory& history, const RunGeometry& geometry);

// The plan's units, bytes per unit and resident bytes, for job_runs.
RunGeometry run_geometry(const Plan& plan);

}  // namespace discount
