// `discount_app plan` and `run --dry-run`: the rates the prediction takes
// (configured, an earlier report, or measured now through lib/probe), then
// the plan and its predicted time: a short summary, or with --verbose (and
// for a dry run) every rate's source, the prediction's derivation and the
// resolved configuration.
#include <sys/stat.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <functional>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands/commands.hpp"
#include "commands/job.hpp"
#include "io/records/part_compress.hpp"
#include "io/output/output.hpp"
#include "pipeline/pipeline.hpp"
#include "backend/system_memory.hpp"
#include "probe/earlier_report.hpp"
#include "probe/io_rates.hpp"
#include "probe/job_limits.hpp"
#include "ranks/ranks.hpp"
#include "resolve/layout_choice.hpp"

namespace discount {

namespace {

using Clock = std::chrono::steady_clock;

// The rates plan predicts from, and the time outside the stages, with one
// line per source for people, and the warnings every plan shows.
struct PlanRates {
  Limits limits;
  FixedCost fixed;
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
};

// Whether a stage the plan needs has no rate yet.
using MissingRate = std::function<bool(Stage)>;

// The job's earlier JSON report: the rates `missing` still lacks, and its
// time outside the stages.
void take_earlier_report(const Job& job, const std::vector<Stage>& needed, const MissingRate& missing,
                         PlanRates& rates) {
  const JobSpec& spec = job.spec;
  const bool file_output = spec.output_mode == OutputMode::file;
  ReportExpectation expect;
  expect.host = host_name();
  expect.input = job.input->describe();
  expect.output_is_file = file_output;
  expect.output_path = file_output ? spec.output.path : ChecksumOutput(spec.output.axes, 1, 1, 1).describe();
  expect.space = execution_space_name(spec.pipeline.space);
  expect.kernel = spec.report.kernel;
  expect.slicing = spec.report.slicing;
  const EarlierReport earlier = read_earlier_report(spec.report_path, expect);
  if (!earlier.usable) {
    if (earlier.why_not.rfind("no report", 0) != 0)
      rates.notes.push_back("earlier run: report " + spec.report_path + " not used: " + earlier.why_not);
    return;
  }
  std::string taken;
  for (Stage stage : needed)
    if (missing(stage) && earlier.rates.of(stage).known()) {
      link_of(rates.limits, stage) = earlier.rates.of(stage);
      taken += std::string(taken.empty() ? "" : ", ") + stage_name(stage);
    }
  const std::string source = "report " + spec.report_path + " of " + file_date_text(spec.report_path);
  if (earlier.outside_stages >= 0) rates.fixed = {earlier.outside_stages, source};
  rates.notes.push_back("earlier run: " + source + (taken.empty() ? "" : ": its " + taken + " rates") +
                        (earlier.outside_stages >= 0 ? ", and its time in no stage" : ""));
}

// What probing the input and the output folder found besides their rates.
struct IoProbeFigures {
  double touch_gb_per_s = 0;   // first touch of host memory
  double create_seconds = -1;  // the scratch file's create, reserve and sync
  double replace_seconds = 0;  // freeing an existing output's blocks on publish
  bool measured = false;
};

// plan's reads of the input and writes of a scratch file, for the rates `missing` still lacks.
IoProbeFigures probe_input_and_output(const Job& job, const MissingRate& missing, PlanRates& rates) {
  const JobSpec& spec = job.spec;
  const Plan& plan = job.plan;
  IoProbeFigures figures;
  const ProbeBudget budget;
  if (missing(Stage::read)) {
    const ProbeResult read =
        probe_read(*job.input, plan, spec.pipeline.dates, spec.pipeline.ids,
                   spec.pipeline.check_finite && job.input->may_hold_nonfinite(), budget, figures.touch_gb_per_s);
    if (read.ok()) {
      rates.limits.read = measured_now(read.gb_per_s());
      figures.measured = true;
    }
    // The measurement reads through the page cache and leaves those bytes
    // in it; a job larger than the free memory reads most of it from disk.
    const std::uint64_t free_memory = host_available_bytes();
    const bool larger = free_memory && plan.input_bytes() > free_memory;
    rates.notes.push_back("read measured now: " + read.detail + " through the run's reader; those bytes are now" +
                          " in the page cache" +
                          (larger ? "; the input (" + format_bytes(plan.input_bytes()) + ") is larger than the " +
                                        format_bytes(free_memory) + " of free memory, so the run reads most of" +
                                        " it at disk speed, which may be slower than this"
                                  : std::string()));
  }
  if (!missing(Stage::write)) return figures;
  const WriteProbe write = probe_write(spec.output, spec.output_mode, plan, budget);
  if (write.ok()) {
    rates.limits.write = measured_now(write.gb_per_s());
    figures.measured = true;
    figures.create_seconds = write.create_seconds;
    // Publishing over an existing output frees its blocks (rename), at the scratch file's rate.
    struct stat old {};
    if (spec.output_mode == OutputMode::file && write.free_gb_per_s > 0 && ::stat(spec.output.path.c_str(), &old) == 0)
      figures.replace_seconds = static_cast<double>(old.st_blocks) * 512 / (write.free_gb_per_s * 1e9);
  }
  rates.notes.push_back("write measured now: " + write.detail);
  if (write.folder_missing)
    rates.warnings.push_back("output folder '" + folder_of(spec.output.path) +
                             "' does not exist yet (the run creates it); the write rate is its"
                             " nearest existing parent's, '" +
                             write.folder + "'");
  return figures;
}

// What the run does outside its stages, from this process's own figures:
// opening the input and resolving (prepare), starting Kokkos, measuring the
// links, creating and publishing the output (the scratch file's create,
// reserve and sync, twice), and the first touch of its buffers.
void fixed_seconds_measured_now(const Plan& plan, double prepare_seconds, double kokkos_seconds, double links_seconds,
                                const IoProbeFigures& io, PlanRates& rates) {
  const double output_file = io.create_seconds > 0 ? 2 * io.create_seconds + io.replace_seconds : 0.0;
  const double touch = io.touch_gb_per_s > 0 ? static_cast<double>(plan.host_bytes) / (io.touch_gb_per_s * 1e9) : 0.0;
  const double fixed = prepare_seconds + kokkos_seconds + links_seconds + output_file + touch;
  rates.fixed = {fixed, "measured now"};
  char line[320];
  std::snprintf(line, sizeof line,
                "start-up and finish measured now: %.3f s (input and plan %.3f s, Kokkos %.3f s, link "
                "measurement %.3f s, output file %.3f s, first touch of %s of buffers %.3f s)",
                fixed, prepare_seconds, kokkos_seconds, links_seconds, output_file,
                format_bytes(plan.host_bytes).c_str(), touch);
  rates.notes.push_back(line);
}

// The rates for plan and run --dry-run, in this order: `limits:` in the
// config; the job's earlier JSON report (report:) when it ran on this host,
// from the same input, into the same folder; then, unless measuring is off
// (--no-measure, limits.measure: false), measured now. `probe_io`: read the
// input and write a scratch file (plan; a dry run writes nothing).
PlanRates plan_rates(const Job& job, const std::vector<std::string>& kokkos_args, bool measure, bool probe_io,
                     double prepare_seconds) {
  const JobSpec& spec = job.spec;
  PlanRates rates;
  rates.limits = configured_limits(spec.limits);
  Limits& limits = rates.limits;
  for (Stage stage : kAllStages)
    if (link_of(limits, stage).known()) link_of(limits, stage).note = "config limits:";
  const auto needed = pipeline_stages(job.plan.request.device_copies);
  const MissingRate missing = [&](Stage stage) {
    return std::find(needed.begin(), needed.end(), stage) != needed.end() && !limits.of(stage).known();
  };
  if (!spec.report_path.empty()) take_earlier_report(job, needed, missing, rates);

  if (!measure || !spec.limits.measure) {
    const bool any_missing = std::any_of(needed.begin(), needed.end(), missing);
    if (any_missing || rates.fixed.seconds < 0)
      rates.notes.push_back(std::string("nothing measured (") + (measure ? "limits.measure: false" : "--no-measure") +
                            ")");
    return rates;
  }
  IoProbeFigures io;
  if (probe_io && ranks::is_root()) io = probe_input_and_output(job, missing, rates);
  double kokkos_seconds = 0, links_seconds = 0;
  bool measured_any = io.measured;
  // Every rank the same: the measurement is collective under MPI.
  if (missing(Stage::kernel) || missing(Stage::h2d) || missing(Stage::d2h)) {
    const auto started = Clock::now();
    std::optional<Kokkos::ScopeGuard> kokkos;
    start_kokkos(kokkos, kokkos_args);
    kokkos_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    links_seconds = measure_links_for_plan(spec.limits, job.plan, version_text(), spec.knobs.cache_dir, limits);
    measured_any = true;
  }
  if (rates.fixed.seconds < 0 && measured_any && ranks::is_root())
    fixed_seconds_measured_now(job.plan, prepare_seconds, kokkos_seconds, links_seconds, io, rates);
  return rates;
}

void print_header(const Job& job) {
  const JobSpec& spec = job.spec;
  std::cout << "input          " << job.input->describe() << "\n";
  std::cout << "selection      dates [" << spec.pipeline.dates.begin << ", " << spec.pipeline.dates.end << "), ids ["
            << spec.pipeline.ids.begin << ", " << spec.pipeline.ids.end << ")\n";
  std::cout << "kernel         " << execution_space_name(spec.pipeline.space) << ", " << spec.report.slicing << "\n";
}

// An input whose discount the app decodes itself: one thread's rate on a
// few of its own chunks, and what the decoding threads reach at most.
void print_decompression(const Job& job) {
  const DecodeSample d = job.input->sample_decoding();
  if (d.chunks == 0) return;
  char line[480];
  std::snprintf(line, sizeof line,
                "%s: %.0f MB/s per thread on a sample of %llu chunks, limit %.2f GB/s on %u threads; %.2f GB/s "
                "with all %u decoding at once",
                d.pipeline.c_str(), d.thread_rate() * 1e-6, static_cast<unsigned long long>(d.chunks),
                d.thread_rate() * d.threads * 1e-9, d.threads, d.together_rate() * 1e-9, d.threads);
  std::cout << "decompression  " << line << "\n";
}

void print_output_and_ranks(const Job& job) {
  const JobSpec& spec = job.spec;
  const Plan& plan = job.plan;
  if (spec.output_mode == OutputMode::file) {
    const std::uint64_t free_bytes = free_disk_bytes(spec.output.path);
    std::cout << "output         " << format_bytes(plan.output_bytes()) << " to " << spec.output.path << "; "
              << (free_bytes ? format_bytes(free_bytes) + " free there" : std::string("free space unknown"))
              << (free_bytes && free_bytes < plan.output_bytes() ? "  ** NOT ENOUGH: the run will stop (exit 74) **"
                                                                 : "")
              << "\n";
    std::cout << "layout         " << layout_text(spec) << "\n";
    if (spec.output.compression.enabled()) {
      const CompressionEstimate z =
          estimate_compression(*job.input, spec.pipeline.dates, spec.pipeline.ids, spec.output.dtype,
                               spec.output.compression, plan.output_bytes());
      char line[480];
      std::snprintf(line, sizeof line,
                    "%s: about %s stored (ratio %.2f on a sample of %s of this job's values); %.0f MB/s on one "
                    "thread, so about %.1f s on %u threads, %s; %.2f GB/s with all %u encoding at once",
                    describe_compression(spec.output.compression).c_str(), format_bytes(z.stored_bytes).c_str(),
                    z.ratio, format_bytes(z.sample_bytes).c_str(), z.thread_rate * 1e-6, z.seconds, z.threads,
                    ranks::multi() ? "after the last slab (each rank its parts)" : "while the slabs are written",
                    z.together_rate * 1e-9, z.threads);
      std::cout << "compression    " << line << "\n";
    }
  }
  if (ranks::multi())
    std::cout << "ranks          " << ranks::size()
              << " (each takes a contiguous share of the slabs still to do, about "
              << (plan.slabs.size() + ranks::size() - 1) / ranks::size() << ")\n";
}

// The stage predicted to take longest.
std::vector<StagePrediction>::const_iterator slowest_stage(const std::vector<StagePrediction>& stages) {
  return std::max_element(stages.begin(), stages.end(),
                          [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
}

// The one line of the summary: the predicted wall time and the stage that
// takes longest, or why there is no prediction.
void print_wall_summary(const std::vector<StagePrediction>& stages, const WallPrediction& wall) {
  if (!wall.unknown.empty()) {
    std::string names;
    for (const auto& name : wall.unknown) names += (names.empty() ? "" : ", ") + name;
    std::cout << "predicted wall cannot predict the time: no rate known for " << names
              << " (run `discount_app plan` without --no-measure to measure them, run the job once with `report:`"
                 " set, or set them under limits:)\n";
    return;
  }
  const auto slowest = slowest_stage(stages);
  char line[320];
  if (wall.pace == kFusedPace) {  // the reading threads also multiply: their two rates add up
    const auto named = [&](Stage stage) {
      return std::find_if(stages.begin(), stages.end(), [&](const auto& s) { return s.stage == stage_name(stage); });
    };
    const auto read = named(Stage::read), kernel = named(Stage::kernel);
    if (read != stages.end() && kernel != stages.end()) {
      const std::string sources = read->source == kernel->source ? read->source : read->source + "; " + kernel->source;
      std::snprintf(line, sizeof line,
                    "predicted wall %.2f s%s; bottleneck %s: %s read at %.2f GB/s and multiplied by the same threads "
                    "at %.2f GB/s (%s)\n",
                    wall.seconds, wall.fixed_known ? "" : " plus start-up and finish", kFusedPace,
                    format_bytes(read->bytes).c_str(), read->gb_per_s, kernel->gb_per_s, sources.c_str());
      std::cout << line;
      return;
    }
  }
  if (wall.pace == kUnstagedPace || wall.pace == kUnstagedDevicePace) {  // each thread's stages add up
    std::string parts;
    for (const auto& s : stages)
      if (wall.pace == kUnstagedPace || s.stage == stage_name(Stage::read) || s.stage == stage_name(Stage::write)) {
        std::snprintf(line, sizeof line, "%s%s %.3f s", parts.empty() ? "" : " + ", s.stage.c_str(), s.seconds);
        parts += line;
      }
    std::snprintf(line, sizeof line,
                  "predicted wall %.2f s%s; memory.staging: none: each I/O thread's %s add up (%s)\n", wall.seconds,
                  wall.fixed_known ? "" : " plus start-up and finish", wall.pace.c_str(), parts.c_str());
    std::cout << line;
    return;
  }
  std::snprintf(line, sizeof line, "predicted wall %.2f s%s; bottleneck %s: %s at %.2f GB/s (%s)\n", wall.seconds,
                wall.fixed_known ? "" : " plus start-up and finish", slowest->stage.c_str(),
                format_bytes(slowest->bytes).c_str(), slowest->gb_per_s, slowest->source.c_str());
  std::cout << line;
}

// A single file whose write stage sets the pace: what split would give, from
// the gain it measured on this kind of file system (resolve/layout_choice.hpp).
void print_split_hint(const Job& job, const std::vector<StagePrediction>& stages, const WallPrediction& now,
                      const PlanRates& rates) {
  const JobSpec& spec = job.spec;
  if (spec.output_mode != OutputMode::file || spec.output.layout != OutputLayout::single || ranks::multi()) return;
  const auto slowest = slowest_stage(stages);
  if (slowest == stages.end() || slowest->stage != stage_name(Stage::write) || slowest->seconds <= 0) return;
  const bool memory = spec.report.output_memory_backed;
  const double gain = memory ? kSplitGainMemoryBacked : kSplitGainDisk;
  std::vector<StagePrediction> split = stages;
  for (auto& s : split)
    if (s.stage == stage_name(Stage::write)) {
      s.seconds /= gain;
      s.gb_per_s *= gain;
    }
  const WallPrediction wall = predict_wall(job.plan, split, rates.fixed);
  if (!wall.unknown.empty() || wall.seconds > 0.95 * now.seconds) return;  // under 5%: not worth a folder of parts
  char line[400];
  std::snprintf(line, sizeof line,
                "hint           the write sets the pace on one file: output.layout: split writes part files at once;"
                " it wrote %.2fx faster on %s, which would make this about %.2f s\n",
                gain, memory ? "the H200 node's /dev/shm" : "the development VM's disk", wall.seconds);
  std::cout << line;
}

int print_plan(const Job& job, const PlanRates& rates, bool verbose) {
  const Limits& limits = rates.limits;
  const Plan& plan = job.plan;
  print_header(job);
  print_decompression(job);
  std::cout << plan.describe();
  print_output_and_ranks(job);
  for (const auto& warning : rates.warnings) std::cout << "warning        " << warning << "\n";
  const auto stages = predict(plan, limits);
  const WallPrediction wall = predict_wall(plan, stages, rates.fixed);
  if (!verbose) {
    print_wall_summary(stages, wall);
    print_split_hint(job, stages, wall, rates);
    std::cout << "               (plan --verbose: each rate's source, the prediction's derivation, the resolved"
                 " configuration)\n";
    return 0;
  }
  Limits short_sources = limits;  // the rows below say which report
  for (Stage stage : kAllStages)
    if (short_sources.of(stage).source == LinkSource::earlier_report) link_of(short_sources, stage).note.clear();
  std::cout << "limits         " << limits_text(short_sources) << "\n";
  for (std::size_t n = 0; n < rates.notes.size(); ++n)
    std::cout << (n ? "               " : "rates          ") << rates.notes[n] << "\n";
  std::cout << describe_prediction(plan, stages, wall);
  print_split_hint(job, stages, wall, rates);
  std::cout << "\nresolved configuration (every default filled in; `discount_app config` prints the same):\n"
            << job.spec.report.config_yaml;
  return 0;
}

}  // namespace

int plan_with_limits(const Job& job, const std::vector<std::string>& kokkos_args, const PlanPrint& how,
                     double prepare_seconds) {
  const PlanRates rates = plan_rates(job, kokkos_args, how.measure, how.probe_io, prepare_seconds);
  return ranks::is_root() ? print_plan(job, rates, how.verbose) : 0;
}

int plan_command(const Config& config, const PlanOptions& options) {
  const auto start = Clock::now();
  const Job job = prepare(config);
  PlanPrint how;
  how.measure = options.measure;
  how.verbose = options.verbose;
  return plan_with_limits(job, options.kokkos_args, how, std::chrono::duration<double>(Clock::now() - start).count());
}

}  // namespace discount
