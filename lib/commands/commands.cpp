#include "commands/commands.hpp"

#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "common/affinity.hpp"
#include "common/error.hpp"
#include "common/startup.hpp"
#include "io/input.hpp"
#include "io/output.hpp"
#include "io/read_set.hpp"
#include "kernels/features.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/input_sums.hpp"
#include "pipeline/signals.hpp"
#include "pipeline/system_memory.hpp"
#include "plan/plan.hpp"
#include "ranks/ranks.hpp"
#include "report/limits.hpp"
#include "report/limits_cache.hpp"
#include "report/progress.hpp"
#include "report/rates.hpp"
#include "report/runs.hpp"
#include "resolve/resolve.hpp"

#ifndef DISCOUNT_VERSION
#define DISCOUNT_VERSION "0.0.0"
#endif
#include "git_hash.hpp"  // generated at build time: DISCOUNT_GIT_HASH

namespace discount {

std::string version_text() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::string backends;
#ifdef KOKKOS_ENABLE_CUDA
  backends += " Cuda";
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  backends += " OpenMP";
#endif
#ifdef KOKKOS_ENABLE_THREADS
  backends += " Threads";
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  backends += " Serial";
#endif
  std::string arch;
#ifdef KOKKOS_ARCH_HOPPER90
  arch = " (GPU arch sm_90)";
#elif defined(KOKKOS_ARCH_AMPERE80)
  arch = " (GPU arch sm_80)";
#endif
  std::string hdf5_flavour;
#ifdef H5_HAVE_PARALLEL
  hdf5_flavour = " (parallel)";
#endif
  const std::string mpi = ranks::built_with_mpi() ? "MPI build, " + std::to_string(ranks::size()) + " rank(s)\n" : "";
  return std::string("discount_app ") + DISCOUNT_VERSION + " (git " + DISCOUNT_GIT_HASH + ")\n" + "Kokkos " +
         std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100) + ", backends:" + backends + arch + "\n" + "HDF5 " +
         std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release) + hdf5_flavour + "\n" + mpi +
         compiled_parts_text() + "\n";
}

namespace {

using Clock = std::chrono::steady_clock;

// What every command knows about the job once the input is open.
struct Job {
  std::unique_ptr<InputSource> input;
  JobSpec spec;
  Plan plan;
  std::string fingerprint;  // fingerprint_of(spec.identity)
};

// This rank's facts: its share of the node's free host memory and, for a
// kernel on the device, of its GPU's free memory (asking makes that GPU
// current, so a host job does not ask).
SystemFacts local_facts(const Config& config, const InputSource& input) {
  SystemFacts facts;
  facts.input = input_facts(input);
  facts.separate_device_memory = needs_device_copies(Space::device);
  facts.host_bytes = host_share(host_available_bytes(), ranks::local_size());
  if (config.compute.space == Space::device && facts.separate_device_memory)
    facts.device_bytes = device_share(device_free_bytes(ranks::local_device(visible_devices())),
                                      ranks::local_size(), visible_devices());
  facts.writer_threads = DirectWriter::threads();
  facts.rank = ranks::rank();
  facts.ranks = ranks::size();
  return facts;
}

// The same facts on every rank, so all ranks resolve the same job: the
// smallest memory shares (a budget given as a percentage grows with them, so
// this is the smallest budget) and the most writer threads.
void agree_facts(SystemFacts& facts) {
  facts.host_bytes = ranks::min(facts.host_bytes);
  facts.device_bytes = ranks::min(facts.device_bytes);
  facts.writer_threads = unsigned(ranks::max(int(facts.writer_threads)));
}

}  // namespace

SystemFacts system_facts(const Config& config, const InputSource& input) {
  SystemFacts facts = ranks::collectively([&] { return local_facts(config, input); });
  agree_facts(facts);
  return facts;
}

namespace {

// Budgets against this rank's share of the machine, before any output exists:
// a plan that would not fit is refused, a generous budget only warned about.
void check_budgets_against_machine(const Plan& plan, const SystemFacts& facts) {
  const MachineMemory machine{facts.host_bytes, facts.separate_device_memory ? facts.device_bytes : 0};
  const std::string warning = ranks::collectively([&] { return check_machine_memory(plan, machine); });
  if (!warning.empty() && ranks::is_root()) std::cerr << "discount_app: warning: " << warning << std::endl;
}

// memory.chunk_axis: auto keeps the axis an earlier run of this output
// recorded (rank 0 reads it; every rank resolves the same job).
void add_recorded_chunk_axis(const Config& config, bool restart, SystemFacts& facts) {
  if (config.memory.chunk_axis || config.output.mode != OutputMode::file) return;
  std::string axis, where;
  ranks::collectively([&] {
    if (!ranks::is_root()) return;
    if (const auto recorded = recorded_chunk_axis(config.output.file, config.output.overwrite, restart)) {
      axis = axis_name(recorded->axis);
      where = recorded->where;
    }
  });
  ranks::broadcast(axis);
  ranks::broadcast(where);
  if (axis.empty()) return;
  facts.recorded_chunk_axis = axis == "id" ? Axis::id : Axis::date;
  facts.recorded_in = where;
}

// Checks the config, opens the input, resolves the job and makes the plan,
// before Kokkos starts or any output exists. Collective under MPI.
Job prepare(const Config& config, bool restart = false) {
  Job job;
  ranks::collectively([&] {
    check_config(config);
    job.input = open_input(config.input);
  });
  SystemFacts facts = system_facts(config, *job.input);
  add_recorded_chunk_axis(config, restart, facts);
  job.spec = ranks::collectively([&] { return resolve(config, facts); });
  job.plan = ranks::collectively([&] { return make_plan(job.spec.plan); });
  check_budgets_against_machine(job.plan, facts);
  job.fingerprint = fingerprint_of(job.spec.identity);
  return job;
}

// Kokkos 3.4 warns on stderr when OMP_PROC_BIND is unset; "false" is what an
// unset variable means for GCC's runtime, so setting it changes nothing else.
void quiet_openmp_warning() { ::setenv("OMP_PROC_BIND", "false", 0); }

// Under MPI every rank measures its own links at the same moment and the
// rates are added up: the whole job's ceiling under the same sharing of PCIe,
// host memory and GPUs as the run, to compare with the report's stage rates
// (every rank's bytes over the slowest rank's seconds). One rank measuring
// alone would overstate the shared links (docs/performance.md has the
// figures). Configured limits are taken as the whole job's. Collective; the
// same on every rank.
void add_up_ranks(Limits& limits) {
  for (LinkLimit* link : {&limits.h2d, &limits.d2h, &limits.kernel}) {
    const bool measured = link->source == "measured";
    std::vector<double> rate{measured ? link->gb_per_s : 0.0};
    ranks::sum(rate);
    const bool everywhere = ranks::min(std::uint64_t{measured}) == 1;
    if (measured) *link = everywhere ? LinkLimit{rate[0], link->source, link->cached, link->measured_at} : LinkLimit{};
  }
}

// What makes a cached measurement this rank's: the host, the build, the GPU,
// the rank layout, the host threads and the measuring buffers' size.
std::string limits_cache_key(const Plan& plan, std::uint64_t cap) {
  std::string key = "host " + host_name() + "\n";
  std::istringstream versions(version_text());
  for (std::string line; std::getline(versions, line);)
    if (line.rfind("MPI build", 0) != 0) key += "build " + line + "\n";
  key += std::string("space ") + (plan.request.device_copies ? "device copies" : "host") + "\n";
  if (plan.request.device_copies) key += "gpu " + device_name() + "\n";
  key += "ranks " + std::to_string(ranks::size()) + ", this node " + std::to_string(ranks::local_size()) +
         ", local rank " + std::to_string(ranks::local_rank()) + "\n";
  key += "host threads " + std::to_string(Kokkos::DefaultHostExecutionSpace().concurrency()) + "\n";
  key += "buffer bytes " + std::to_string(cap) + "\n";
  return key;
}

// The job's limits from a cache entry: configured links win, the others are
// taken from the entry. Empty when the entry lacks a link the job measures.
std::optional<Limits> from_cache(const std::optional<Limits>& cached, const LimitsConfig& config, bool device_copies) {
  if (!cached) return std::nullopt;
  Limits limits = configured_limits(config);
  const Stage wanted[] = {Stage::kernel, Stage::h2d, Stage::d2h};
  for (Stage stage : wanted) {
    if (!device_copies && stage != Stage::kernel) break;
    if (limits.of(stage).known()) continue;
    if (!cached->of(stage).known()) return std::nullopt;
    limits.of(stage) = cached->of(stage);
  }
  return limits;
}

// The run's measuring buffers: within a quarter of the budgets, at most
// 256 MiB; 0 below 32 MiB, where a measurement would time caches, not links
// (the links then stay unknown).
std::uint64_t run_measuring_bytes(const Plan& plan) {
  std::uint64_t cap = plan.request.host_budget / 4;
  if (plan.request.device_copies) cap = std::min(cap, plan.request.device_budget / 4);
  return cap < (std::uint64_t{32} << 20) ? 0 : std::min<std::uint64_t>(cap, std::uint64_t{256} << 20);
}

// Each rank's measurement is cached (report/limits_cache.hpp); the job
// measures unless every rank has a valid entry. Collective under MPI.
Limits job_limits(const LimitsConfig& config, const Plan& plan, bool remeasure) {
  const std::uint64_t cap = run_measuring_bytes(plan);
  if (cap == 0 || !config.measure) return configured_limits(config);
  const std::string key = limits_cache_key(plan, cap);
  const std::time_t now = std::time(nullptr);
  std::optional<Limits> limits;
  if (!remeasure) limits = from_cache(load_cached_limits(key, config.cache_days, now), config, plan.request.device_copies);
  if (ranks::min(std::uint64_t{limits.has_value()}) == 0) {
    ranks::barrier();
    limits = measure_limits(config, plan.request.device_copies, cap);
    if (config.cache_days > 0) store_cached_limits(key, *limits, now);
  }
  if (ranks::multi()) add_up_ranks(*limits);
  return *limits;
}

std::string limits_text(const Limits& limits) {
  std::string text = limits.describe();
  if (ranks::multi())
    text += "; h2d, d2h and kernel: " + std::to_string(ranks::size()) + " ranks measuring at once, added up";
  return text;
}

// The rates plan predicts from, and the time outside the stages, with one
// line per source for people.
struct PlanRates {
  Limits limits;
  FixedCost fixed;
  std::vector<std::string> notes;
};

int print_plan(const Job& job, const PlanRates& rates) {
  const Limits& limits = rates.limits;
  const JobSpec& spec = job.spec;
  const Plan& plan = job.plan;
  std::cout << "input          " << job.input->describe() << "\n";
  std::cout << "selection      dates [" << spec.pipeline.dates.begin << ", " << spec.pipeline.dates.end << "), ids ["
            << spec.pipeline.ids.begin << ", " << spec.pipeline.ids.end << ")\n";
  std::cout << "kernel         " << execution_space_name(spec.pipeline.space) << ", " << spec.report.slicing << "\n";
  std::cout << plan.describe();
  if (spec.output_mode == OutputMode::file) {
    const std::uint64_t free_bytes = free_disk_bytes(spec.output.path);
    std::cout << "output         " << format_bytes(plan.output_bytes()) << " to " << spec.output.path << "; "
              << (free_bytes ? format_bytes(free_bytes) + " free there" : std::string("free space unknown"))
              << (free_bytes && free_bytes < plan.output_bytes() ? "  ** NOT ENOUGH: the run will stop (exit 74) **"
                                                                 : "")
              << "\n";
  }
  if (ranks::multi())
    std::cout << "ranks          " << ranks::size() << " (each takes a contiguous share of the slabs still to do, about "
              << (plan.slabs.size() + ranks::size() - 1) / ranks::size() << ")\n";
  Limits short_sources = limits;  // the rows below say which report
  for (Stage stage : kAllStages)
    if (short_sources.of(stage).source.rfind("report ", 0) == 0) link_of(short_sources, stage).source = "report";
  std::cout << "limits         " << limits_text(short_sources) << "\n";
  for (std::size_t n = 0; n < rates.notes.size(); ++n)
    std::cout << (n ? "               " : "rates          ") << rates.notes[n] << "\n";
  const auto stages = predict(plan, limits);
  std::cout << describe_prediction(plan, stages, predict_wall(plan, stages, rates.fixed));
  std::cout << "\nresolved configuration (every default filled in; `discount_app config` prints the same):\n"
            << spec.report.config_yaml;
  return 0;
}

}  // namespace

std::vector<std::string> kokkos_arguments(const std::vector<std::string>& user_args) {
  std::vector<std::string> args{"discount_app"};
  args.insert(args.end(), user_args.begin(), user_args.end());
  for (auto& a : ranks::kokkos_rank_args(user_args, visible_devices(),
                                         ranks::threads_per_rank(process_cpu_count(), job_cpu_count())))
    args.push_back(a);
  return args;
}

namespace {

// Starts Kokkos unless a caller (tests, an embedding code) already runs it.
void start_kokkos(std::optional<Kokkos::ScopeGuard>& kokkos, const std::vector<std::string>& user_args) {
  if (Kokkos::is_initialized()) return;
  quiet_openmp_warning();
  std::vector<std::string> args = kokkos_arguments(user_args);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  kokkos.emplace(argc, argv.data());
}

// Where plan's rates came from, as its output says it.
constexpr const char* kConfigured = "config limits:";
constexpr const char* kMeasuredNow = "measured now";

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : path.substr(0, slash);
}

// Fills the links plan still lacks (kernel, and h2d/d2h for a device kernel)
// as the run measures them (job_limits), with buffers of at least 64 MiB:
// plan allocates no slabs, so a small budget need not leave the links
// unknown. Returns the seconds the run itself would spend on it (0 when the
// run measures nothing: buffers under 32 MiB). Collective under MPI.
double measure_compute_links(const Job& job, const std::vector<std::string>& kokkos_args, PlanRates& rates,
                             double& kokkos_seconds) {
  const Plan& plan = job.plan;
  const std::uint64_t run_cap = run_measuring_bytes(plan);
  bool run_measures = run_cap > 0;
  const std::uint64_t cap = std::max<std::uint64_t>(run_cap, std::uint64_t{64} << 20);
  const auto started = Clock::now();
  std::optional<Kokkos::ScopeGuard> kokkos;
  start_kokkos(kokkos, kokkos_args);
  kokkos_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  // A run that finds this host's cached limits (job_limits) spends nothing on them.
  if (run_measures && job.spec.limits.measure &&
      from_cache(load_cached_limits(limits_cache_key(plan, run_cap), job.spec.limits.cache_days, std::time(nullptr)),
                 job.spec.limits, plan.request.device_copies))
    run_measures = false;
  ranks::barrier();
  const auto t0 = Clock::now();
  Limits measured = measure_limits(job.spec.limits, plan.request.device_copies, cap);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (ranks::multi()) add_up_ranks(measured);
  Limits& limits = rates.limits;
  for (auto link : {&Limits::h2d, &Limits::kernel, &Limits::d2h})
    if (!(limits.*link).known() && (measured.*link).known()) limits.*link = {(measured.*link).gb_per_s, kMeasuredNow};
  return run_measures ? seconds : 0.0;
}

// The rates for plan and run --dry-run, in this order: `limits:` in the
// config; the job's earlier JSON report (report:) when it ran on this host,
// from the same input, into the same folder; then, unless measuring is off
// (--no-measure, limits.measure: false), measured now. `probe_io`: read the
// input and write a scratch file (plan; a dry run writes nothing).
PlanRates plan_rates(const Job& job, const std::vector<std::string>& kokkos_args, bool measure, bool probe_io,
                     double prepare_seconds) {
  const JobSpec& spec = job.spec;
  const Plan& plan = job.plan;
  const bool file_output = spec.output_mode == OutputMode::file;
  PlanRates rates;
  rates.limits = configured_limits(spec.limits);
  Limits& limits = rates.limits;
  for (Stage stage : kAllStages)
    if (link_of(limits, stage).known()) link_of(limits, stage).source = kConfigured;
  const auto needed = pipeline_stages(plan.request.device_copies);
  const auto missing = [&](Stage stage) {
    return std::find(needed.begin(), needed.end(), stage) != needed.end() && !limits.of(stage).known();
  };
  const auto any_missing = [&] {
    return std::any_of(needed.begin(), needed.end(), [&](Stage stage) { return missing(stage); });
  };

  if (!spec.report_path.empty()) {
    ReportExpectation expect;
    expect.host = host_name();
    expect.input = job.input->describe();
    expect.output_is_file = file_output;
    expect.output_path = file_output ? spec.output.path
                                     : ChecksumOutput(spec.output.axes, 1, 1, 1).describe();
    expect.space = execution_space_name(spec.pipeline.space);
    expect.kernel = spec.report.kernel;
    expect.slicing = spec.report.slicing;
    const EarlierReport earlier = read_earlier_report(spec.report_path, expect);
    if (earlier.usable) {
      std::string taken;
      for (Stage stage : needed)
        if (missing(stage) && earlier.rates.of(stage).known()) {
          link_of(limits, stage) = earlier.rates.of(stage);
          taken += std::string(taken.empty() ? "" : ", ") + stage_name(stage);
        }
      const std::string source = "report " + spec.report_path + " of " + file_date_text(spec.report_path);
      if (earlier.outside_stages >= 0) rates.fixed = {earlier.outside_stages, source};
      rates.notes.push_back("earlier run: " + source + (taken.empty() ? "" : ": its " + taken + " rates") +
                            (earlier.outside_stages >= 0 ? ", and its time in no stage" : ""));
    } else if (earlier.why_not.rfind("no report", 0) != 0) {
      rates.notes.push_back("earlier run: report " + spec.report_path + " not used: " + earlier.why_not);
    }
  }

  if (!measure || !spec.limits.measure) {
    if (any_missing() || rates.fixed.seconds < 0)
      rates.notes.push_back(std::string("nothing measured (") +
                            (measure ? "limits.measure: false" : "--no-measure") + ")");
    return rates;
  }

  double touch_gb_per_s = 0, create_seconds = -1, kokkos_seconds = 0, links_seconds = 0, replace_seconds = 0;
  bool measured_any = false;
  if (probe_io && ranks::is_root()) {
    const ProbeBudget budget;
    if (missing(Stage::read)) {
      const ProbeResult read = probe_read(*job.input, plan, spec.pipeline.dates, spec.pipeline.ids,
                                          spec.pipeline.check_finite && job.input->may_hold_nonfinite(), budget,
                                          touch_gb_per_s);
      if (read.ok()) {
        limits.read = {read.gb_per_s(), kMeasuredNow};
        measured_any = true;
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
    if (missing(Stage::write)) {
      const WriteProbe write = probe_write(spec.output, spec.output_mode, plan, budget);
      if (write.ok()) {
        limits.write = {write.gb_per_s(), kMeasuredNow};
        measured_any = true;
        create_seconds = write.create_seconds;
        // Publishing over an existing output frees its blocks (rename), at the scratch file's rate.
        struct stat old {};
        if (file_output && write.free_gb_per_s > 0 && ::stat(spec.output.path.c_str(), &old) == 0)
          replace_seconds = static_cast<double>(old.st_blocks) * 512 / (write.free_gb_per_s * 1e9);
      }
      rates.notes.push_back("write measured now: " + write.detail);
      if (write.folder_missing)
        rates.notes.push_back("output folder '" + folder_of(spec.output.path) +
                              "' does not exist yet (the run refuses that: create it first); the write rate is its"
                              " nearest existing parent's, '" + write.folder + "'");
    }
  }
  // Every rank the same: the measurement is collective under MPI.
  if (missing(Stage::kernel) || missing(Stage::h2d) || missing(Stage::d2h)) {
    links_seconds = measure_compute_links(job, kokkos_args, rates, kokkos_seconds);
    measured_any = true;
  }
  if (rates.fixed.seconds < 0 && measured_any && ranks::is_root()) {
    // What the run does outside its stages, from this process's own figures:
    // opening the input and resolving (prepare), starting Kokkos, measuring
    // the links, creating and publishing the output (the scratch file's
    // create, reserve and sync, twice), and the first touch of its buffers.
    double fixed = prepare_seconds + kokkos_seconds + links_seconds;
    if (create_seconds > 0) fixed += 2 * create_seconds + replace_seconds;
    if (touch_gb_per_s > 0) fixed += static_cast<double>(plan.host_bytes) / (touch_gb_per_s * 1e9);
    rates.fixed = {fixed, kMeasuredNow};
    char line[320];
    std::snprintf(line, sizeof line,
                  "start-up and finish measured now: %.3f s (input and plan %.3f s, Kokkos %.3f s, link "
                  "measurement %.3f s, output file %.3f s, first touch of %s of buffers %.3f s)",
                  fixed, prepare_seconds, kokkos_seconds, links_seconds,
                  create_seconds > 0 ? 2 * create_seconds + replace_seconds : 0.0,
                  format_bytes(plan.host_bytes).c_str(),
                  touch_gb_per_s > 0 ? plan.host_bytes / (touch_gb_per_s * 1e9) : 0.0);
    rates.notes.push_back(line);
  }
  return rates;
}

// plan and run --dry-run: the rates (lib/report/rates.hpp), then the plan
// and its predicted time on rank 0.
int plan_with_limits(const Job& job, const std::vector<std::string>& kokkos_args, bool measure, bool probe_io,
                     double prepare_seconds) {
  const PlanRates rates = plan_rates(job, kokkos_args, measure, probe_io, prepare_seconds);
  return ranks::is_root() ? print_plan(job, rates) : 0;
}

// Creates or resumes the output. Under MPI rank 0 does it alone (checks,
// creation, resume), then the other ranks open what it made.
std::unique_ptr<OutputSink> open_sink(const Job& job, bool restart) {
  OutputSpec spec = job.spec.output;
  if (job.spec.output_mode == OutputMode::checksum)
    return std::make_unique<ChecksumOutput>(spec.axes, spec.dates, spec.ids, spec.nums);
  spec.restart = restart;
  spec.fingerprint = job.fingerprint;
  spec.slabs = static_cast<std::int64_t>(job.plan.slabs.size());
  spec.read_piece_bytes = job.plan.slab_bytes;
  spec.input_sums = input_sums_reader(*job.input, job.spec.pipeline, job.plan);
  spec.provenance = version_text() + "input: " + job.input->describe() + "\n" + job.spec.report.config_yaml;
  std::unique_ptr<FileOutput> output;
  ranks::collectively([&] {
    if (ranks::is_root()) output = std::make_unique<FileOutput>(spec);
  });
  std::string state = output && output->state() == FileOutput::State::already_complete ? "complete" : "open";
  ranks::broadcast(state);
  if (state == "complete") {
    spec.attach = false;
    if (!output) output = std::make_unique<FileOutput>(spec);  // sees the finished file too
    return output;
  }
  ranks::collectively([&] {
    if (!ranks::is_root()) {
      spec.attach = true;
      output = std::make_unique<FileOutput>(spec);
    }
  });
  ranks::collectively([&] { output->open_collective(); });
  return output;
}

// The report before anything ran. Its stages are named and empty until the
// pipeline fills them: a rank that fails before (or while) running still
// reports the same stages, so every rank makes the same collectives.
RunReport start_report(const Job& job, const OutputSink& sink) {
  RunReport report;
  report.version = DISCOUNT_VERSION;
  report.versions = version_text();
  report.host = host_name();
  report.input = job.input->describe();
  report.output = sink.describe();
  report.space = execution_space_name(job.spec.pipeline.space);
  report.kernel = job.spec.report.kernel;
  report.slicing = job.spec.report.slicing;
  report.plan = job.plan.describe();
  report.config_yaml = job.spec.report.config_yaml;
  report.stages = empty_stages(job.plan.request.device_copies);
  return report;
}

// Status lines: time-stamped when stdout is a log (report/progress.hpp).
void announce(const RunReport& report, const Plan& plan) {
  const std::string tag = status_prefix();
  std::cout << tag << "input  " << report.input << "\n" << tag << "output " << report.output << "\n" << tag
            << "kernel " << report.space << ", " << report.slicing << "\n" << tag << "plan   " << plan.slabs.size()
            << " slab(s) of up to " << format_bytes(plan.slab_bytes) << ", host " << format_bytes(plan.host_bytes);
  if (plan.request.device_copies) std::cout << ", device " << format_bytes(plan.device_bytes);
  if (ranks::multi()) std::cout << ", per rank; " << ranks::size() << " ranks";
  std::cout << "\n" << tag << "chunk  " << axis_name(plan.request.chunk_axis) << " ("
            << plan.request.chunk_axis_reason << ")";
  std::cout << std::endl;
}

[[noreturn]] void stopped(const RunReport& report, const OutputSink& sink, int signo) {
  const auto* file_output = dynamic_cast<const FileOutput*>(&sink);
  const std::string where = file_output ? "; progress saved in " + file_output->partial_path() : "";
  const std::string done =
      ranks::multi()
          ? " after this rank's " + std::to_string(report.slabs_run) + " slab(s) of this run"
          : " after " + std::to_string(report.slabs_skipped + report.slabs_run) + " of " +
                std::to_string(report.slabs_total) + " slabs";
  throw Error(ExitCode::interrupted, std::string("interrupted by ") + signal_name(signo) + done +
                                         where + "; run the same command again to resume");
}

// Keeps what was written for the resume, if the disk still lets us; bad
// input data found mid-run leaves nothing worth keeping.
void save_progress(const std::exception_ptr& failure, OutputSink& sink) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    if (e.code() == ExitCode::data_invalid) return;
  } catch (...) {
  }
  try {
    sink.checkpoint();
  } catch (const Error&) {
  }
}

// Starts Kokkos, takes the link limits, runs this rank's slabs and makes them
// durable. Returns this rank's outcome (nullptr: every slab done); the ranks
// agree on it later. `measure`: someone reads the limits (the summary or a
// JSON report); job_limits is collective, and `measure` is the same on every
// rank.
std::exception_ptr run_slabs(const Job& job, const RunOptions& options, OutputSink& sink, RunReport& report,
                             Limits& limits, bool measure, bool talk) {
  try {
    std::optional<Kokkos::ScopeGuard> kokkos;
    start_kokkos(kokkos, options.kokkos_args);
    startup::mark("Kokkos");
    limits = measure ? job_limits(job.spec.limits, job.plan, options.remeasure) : configured_limits(job.spec.limits);
    startup::mark(limits.kernel.cached ? "limits (cached)" : "limits");
    if (job.plan.request.device_copies) report.gpu = device_name();
    if (talk) std::cout << status_prefix() << "limits " << limits_text(limits) << std::endl;
    PipelineJob pipeline;
    pipeline.spec = &job.spec.pipeline;
    pipeline.plan = &job.plan;
    pipeline.input = job.input.get();
    pipeline.sink = &sink;
    pipeline.stop = options.stop ? options.stop : &stop_signal();
    pipeline.progress = talk;
    pipeline.on_progress = options.on_progress;
    run_pipeline(pipeline, report);
    if (report.interrupted) {
      sink.checkpoint();  // the slabs finished before the stop count as done
      stopped(report, sink, pipeline.stop->load());
    }
    sink.flush();
    return nullptr;
  } catch (...) {
    const std::exception_ptr failure = std::current_exception();
    save_progress(failure, sink);
    return failure;
  }
}

// Every rank, whatever its outcome, before rank 0 reopens the file alone.
void close_output(FileOutput* output, std::exception_ptr& failure) {
  if (!output) return;
  try {
    output->close_collective();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
}

// The ranks' one agreement on the run: the error every rank then throws, or
// nullptr when every rank finished. Collective.
std::exception_ptr agree_on_outcome(const std::exception_ptr& failure) {
  try {
    ranks::agree(failure);
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

// Only a job every rank finished is published; then the checksums of every
// rank are added up. Collective.
void publish(OutputSink& sink, RunReport& report) {
  ranks::collectively([&] {
    if (ranks::is_root()) sink.publish();
  });
  if (auto* checksum = dynamic_cast<ChecksumOutput*>(&sink)) {
    checksum->combine_ranks();
    report.has_checksum = true;
    report.date_sums = checksum->date_sums();
    report.date_bits = checksum->date_bits();
    report.global_bits = checksum->global_bits();
  }
}

// After a failure every rank agreed on: bad input data leaves no fresh
// partial output behind; an interrupted run still writes its report.
[[noreturn]] void give_up(const std::exception_ptr& agreed, FileOutput* fresh_output, RunReport& report,
                          const std::string& report_path) {
  try {
    std::rethrow_exception(agreed);
  } catch (const Error& e) {
    if (e.code() == ExitCode::data_invalid && fresh_output && ranks::is_root())
      ::unlink(fresh_output->partial_path().c_str());
    if (e.code() == ExitCode::interrupted && ranks::is_root() && !report_path.empty()) {
      report.outcome = "interrupted";
      write_report(report, report_path);
    }
    throw;
  }
}

// Rank 0: the runs the output records (this one included), so the report
// covers the whole job. A record that cannot be read leaves the report as
// this run's alone.
void add_job_runs(RunReport& report, const FileOutput* output, const Plan& plan) {
  if (!output || !ranks::is_root()) return;
  try {
    const RunHistory history = output->run_history();
    report.runs = job_runs(history, run_geometry(plan));
    report.run = output->run_number();
    report.unit_axis = history.unit_axis;
  } catch (const Error&) {
    report.runs.clear();
  }
}

void deliver_report(const RunReport& report, const std::string& report_path, bool talk) {
  if (!ranks::is_root()) return;
  if (talk) std::cout << report.to_text() << std::flush;
  if (!report_path.empty()) write_report(report, report_path);
}

// `verify:` in the config: rank 0 checks the published output.
int verify_after_run(const Config& config) {
  if (config.verify == VerifyMode::none) return 0;
  int status = 0;
  ranks::collectively([&] {
    if (ranks::is_root()) status = verify_job(config, config.verify == VerifyMode::sample);
  });
  return status;
}

}  // namespace

// Orders the steps and the ranks' collectives; every rank runs each
// collective step, whatever its own outcome so far.
int run_command(const Config& config, const RunOptions& options) {
  const auto start = Clock::now();
  startup::mark("command line and config");
  if (!options.stop) install_signal_handlers();
  const Job job = prepare(config, options.restart);
  startup::mark("input, resolve and plan");
  const std::string report_path = options.report_path.empty() ? job.spec.report_path : options.report_path;
  // Nothing the job reads is written or deleted (io/read_set.hpp).
  ranks::collectively([&] {
    if (ranks::is_root())
      check_run_writes(config, options.restart, report_path, options.report_path.empty() ? "report" : "--report");
  });
  if (options.dry_run)
    return plan_with_limits(job, options.kokkos_args, true, false,
                            std::chrono::duration<double>(Clock::now() - start).count());
  const bool talk = !options.quiet && ranks::is_root();

  std::unique_ptr<OutputSink> sink = open_sink(job, options.restart);
  startup::mark("output");
  auto* file_output = dynamic_cast<FileOutput*>(sink.get());
  if (file_output && file_output->state() == FileOutput::State::already_complete) {
    if (talk)
      std::cout << status_prefix() << job.spec.output.path << " is already complete for this job; nothing to do\n";
    return 0;
  }
  FileOutput* fresh_output = file_output && file_output->state() == FileOutput::State::fresh ? file_output : nullptr;
  RunReport report = start_report(job, *sink);
  if (talk) announce(report, job.plan);

  Limits limits;
  std::exception_ptr failure =
      run_slabs(job, options, *sink, report, limits, !options.quiet || !report_path.empty() || options.report_out, talk);
  report.ranks = ranks::size();
  report.startup = startup::breakdown();
  combine_rank_reports(report);
  apply_limits(report, limits);
  close_output(file_output, failure);
  const std::exception_ptr agreed = agree_on_outcome(failure);
  if (!agreed) publish(*sink, report);
  // Once, on every rank: the slowest rank's time is the job's.
  report.wall_seconds = ranks::max(std::chrono::duration<double>(Clock::now() - start).count());
  add_job_runs(report, file_output, job.plan);
  if (agreed) give_up(agreed, fresh_output, report, report_path);
  deliver_report(report, report_path, talk);
  if (options.report_out) *options.report_out = report;
  return verify_after_run(config);
}

int plan_command(const Config& config, const PlanOptions& options) {
  const auto start = Clock::now();
  const Job job = prepare(config);
  return plan_with_limits(job, options.kokkos_args, options.measure, true,
                          std::chrono::duration<double>(Clock::now() - start).count());
}

int config_command(const Config& config) {
  std::cout << config.to_yaml();
  std::cout << "# " << compiled_parts_text() << "\n";  // a YAML comment: the output stays valid
  return 0;
}

int verify_job(const Config& config, bool sample) {
  VerifyOptions options;
  options.full = !sample;
  return verify_command(config, options);
}

int generate_job(const GenerateOptions& options) { return generate_command(options); }

Config load_config_on_every_rank(const std::string& path) {
  return ranks::collectively([&] { return load_config(path); });
}

}  // namespace discount
