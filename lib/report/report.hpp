// Where the time went: per-stage bytes, busy seconds and rates, the wall
// time, and (checksum sink) the per-date checksums. Printed as text and
// written as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/startup.hpp"
#include "io/input/input.hpp"
#include "io/records/compress_stats.hpp"
#include "plan/limits.hpp"
#include "plan/plan.hpp"
#include "report/runs.hpp"

namespace discount {

struct StageStats {
  std::string name;
  std::uint64_t bytes = 0;
  double seconds = 0.0;  // busy time of the stage's thread
  int slabs = 0;
  // The link's limit (apply_limits fills it by name); 0: unknown.
  double limit_gb_per_s = 0.0;
  std::string limit_source = {};  // "measured" | "configured" | ""
  double gb_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0; }
  // gb_per_s() / limit_gb_per_s: 1.0 runs at the limit. < 0 when the limit is
  // unknown or the stage did no timed work.
  double fraction_of_limit() const { return limit_gb_per_s > 0 && seconds > 0 ? gb_per_s() / limit_gb_per_s : -1.0; }
};

// The JSON report's layout version: 2 made input, plan and config objects
// (1 had them as text). Readers check it before reading those keys.
constexpr int kReportSchemaVersion = 2;

// What the JSON report's `input` object holds (report/report_job.hpp fills it).
struct InputReport {
  std::string source;                         // "hdf5" | "synthetic"; empty: not described
  std::vector<DatasetFacts> datasets;         // multiplier, discount
  std::vector<std::string> axes;              // the discount's axis order in the file
  std::int64_t dates = 0, ids = 0, nums = 0;  // full extents in the source
  Range dates_selected, ids_selected;         // input.dates / input.ids, absolute
};

struct RunReport {
  std::string version;
  std::string versions;  // app, git, Kokkos (backends, arch), HDF5: version_text()
  std::string host;      // rank 0's host name
  std::string gpu;       // name of rank 0's GPU; empty when the kernel ran on the host
  std::string input, output, space, kernel, slicing, plan;
  std::string config_yaml;
  // Structured copies for the JSON report (report/report_job.hpp's
  // describe_job): the input's datasets and the plan; without them the JSON's
  // input and plan objects hold only the text above.
  InputReport input_facts;
  Plan plan_facts;
  bool has_plan_facts = false;
  std::vector<StageStats> stages;
  double wall_seconds = 0.0;
  // From the first upload's start to the last download's end (device path
  // only): the streaming rate without start-up and shut-down.
  double device_path_seconds = 0.0;
  // Wall seconds in which at least one stage was busy (the union of their
  // timed intervals); wall_seconds less this is the time in no stage.
  double any_stage_seconds = 0.0;
  std::uint64_t input_bytes = 0, output_bytes = 0;  // moved in this run
  // The staging ring made ready (pinned, or its fresh pages touched) on a
  // thread of its own while the first slabs streamed; in no stage's figure.
  std::uint64_t staging_bytes = 0;
  // Staging an earlier run of this process kept and this one took: of the
  // ring, or (memory.staging: none on a GPU) the threads' pinned pieces.
  std::uint64_t staging_reused_bytes = 0;
  double staging_seconds = 0.0;
  // Every run that wrote the output, this one included (report/runs.hpp);
  // empty without a run record (checksum sink, an output from an older version).
  std::vector<JobRun> runs;
  int run = 0;            // this run's number among them
  std::string unit_axis;  // what the runs' units count: "date" | "id"
  int slabs_total = 0, slabs_run = 0, slabs_skipped = 0;
  bool interrupted = false;
  std::string outcome = "complete";  // complete | already complete | interrupted
  // Checksum sink only.
  std::vector<double> date_sums;
  std::vector<std::uint64_t> date_bits;
  std::uint64_t global_bits = 0;
  bool has_checksum = false;
  // output.compression: the parts compressed at publication, the ranks'
  // summed (codec empty: none).
  CompressStats compression;
  // The input's chunks decoded on the app's threads (raw_bytes 0: none),
  // the ranks' summed.
  DecodeStats decompression;
  // The link limits the stages were held against (apply_limits).
  Limits limits;
  // The multiply ran piece by piece beside the I/O (compute.kernel: fused, or
  // memory.staging: none): its line times work on cached pieces (or, on a
  // GPU, the launches), which the kernel's link limit does not measure, so
  // that stage is held against none.
  bool kernel_on_pieces = false;
  int ranks = 1;  // processes that shared the job
  // Under MPI: each rank's host name, by rank, and the slowest rank's
  // seconds in the ranks' collectives (waits for the others included).
  std::vector<std::string> rank_hosts;
  double collective_seconds = 0.0;
  // From exec to the first read of input data, by phase (rank 0's).
  startup::Breakdown startup;

  double effective_gb_per_s() const;  // this run's (input + output bytes) / wall
  // The whole job's bytes: every recorded run's, else this run's.
  std::uint64_t job_input_bytes() const;
  std::uint64_t job_output_bytes() const;
  // The stage whose thread was busy longest: with overlap, the one that sets
  // the pace. Empty before any stage ran.
  const StageStats* bottleneck() const;
  std::string to_text() const;
  std::string to_json() const;
};

// The stages a run reports, named and empty, in the pipeline's order
// (plan/stages.hpp): read, h2d, kernel, d2h, write with device copies; read,
// kernel, write without.
std::vector<StageStats> empty_stages(bool device_copies);

// Records `limits` in the report and gives each stage its link's limit by
// stage name. Call after run_pipeline (which sets report.stages).
void apply_limits(RunReport& report, const Limits& limits);

// Writes the JSON report atomically: `<path>.tmp.<pid>` beside it, fsync,
// rename (io/posix/atomic_file.hpp).
void write_report(const RunReport& report, const std::string& path);

}  // namespace discount
