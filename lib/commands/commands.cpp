#include "commands/commands.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "common/affinity.hpp"
#include "common/error.hpp"
#include "io/input.hpp"
#include "io/output.hpp"
#include "kernels/features.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/signals.hpp"
#include "pipeline/system_memory.hpp"
#include "plan/plan.hpp"
#include "ranks/ranks.hpp"
#include "report/limits.hpp"
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
    if (measured) *link = everywhere ? LinkLimit{rate[0], link->source} : LinkLimit{};
  }
}

// Measuring buffers within a quarter of the budgets; below 32 MiB a
// measurement would time caches, not links, so links stay unknown.
// Collective under MPI.
Limits job_limits(const LimitsConfig& config, const Plan& plan) {
  std::uint64_t cap = plan.request.host_budget / 4;
  if (plan.request.device_copies) cap = std::min(cap, plan.request.device_budget / 4);
  if (cap < (std::uint64_t{32} << 20) || !config.measure) return configured_limits(config);
  ranks::barrier();
  Limits limits = measure_limits(config, plan.request.device_copies, cap);
  if (ranks::multi()) add_up_ranks(limits);
  return limits;
}

std::string limits_text(const Limits& limits) {
  std::string text = limits.describe();
  if (ranks::multi())
    text += "; h2d, d2h and kernel: " + std::to_string(ranks::size()) + " ranks measuring at once, added up";
  return text;
}

int print_plan(const Job& job, const Limits& limits) {
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
  std::cout << "limits         " << limits_text(limits) << "\n";
  std::cout << describe_prediction(plan, predict(plan, limits));
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

// plan and run --dry-run: measure the links the run would use (Kokkos starts
// for that, and nothing else), then print.
int plan_with_limits(const Job& job, const std::vector<std::string>& kokkos_args) {
  Limits limits = configured_limits(job.spec.limits);
  if (job.spec.limits.measure) {
    std::optional<Kokkos::ScopeGuard> kokkos;
    start_kokkos(kokkos, kokkos_args);
    limits = job_limits(job.spec.limits, job.plan);
  }
  return ranks::is_root() ? print_plan(job, limits) : 0;
}

// Creates or resumes the output. Under MPI rank 0 does it alone (checks,
// creation, resume), then the other ranks open what it made.
std::unique_ptr<OutputSink> open_sink(const Job& job, bool restart) {
  OutputSpec spec = job.spec.output;
  if (job.spec.output_mode == OutputMode::checksum)
    return std::make_unique<ChecksumOutput>(spec.axes, spec.dates, spec.ids, spec.nums);
  spec.restart = restart;
  spec.fingerprint = job.fingerprint;
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

void announce(const RunReport& report, const Plan& plan) {
  std::cout << "[discount_app] input  " << report.input << "\n[discount_app] output " << report.output
            << "\n[discount_app] kernel " << report.space << ", " << report.slicing << "\n[discount_app] plan   "
            << plan.slabs.size() << " slab(s) of up to " << format_bytes(plan.slab_bytes) << ", host "
            << format_bytes(plan.host_bytes);
  if (plan.request.device_copies) std::cout << ", device " << format_bytes(plan.device_bytes);
  if (ranks::multi()) std::cout << ", per rank; " << ranks::size() << " ranks";
  std::cout << "\n[discount_app] chunk  " << axis_name(plan.request.chunk_axis) << " ("
            << plan.request.chunk_axis_reason << ")";
  std::cout << std::endl;
}

[[noreturn]] void stopped(const RunReport& report, const OutputSink& sink) {
  const auto* file_output = dynamic_cast<const FileOutput*>(&sink);
  const std::string where = file_output ? "; progress saved in " + file_output->partial_path() : "";
  const std::string done =
      ranks::multi()
          ? " after this rank's " + std::to_string(report.slabs_run) + " slab(s) of this run"
          : " after " + std::to_string(report.slabs_skipped + report.slabs_run) + " of " +
                std::to_string(report.slabs_total) + " slabs";
  throw Error(ExitCode::interrupted, std::string("interrupted by ") + signal_name(stop_signal().load()) + done +
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
    limits = measure ? job_limits(job.spec.limits, job.plan) : configured_limits(job.spec.limits);
    if (job.plan.request.device_copies) report.gpu = device_name();
    if (talk) std::cout << "[discount_app] limits " << limits_text(limits) << std::endl;
    PipelineJob pipeline;
    pipeline.spec = &job.spec.pipeline;
    pipeline.plan = &job.plan;
    pipeline.input = job.input.get();
    pipeline.sink = &sink;
    pipeline.stop = &stop_signal();
    pipeline.progress = talk;
    run_pipeline(pipeline, report);
    if (report.interrupted) {
      sink.checkpoint();  // the slabs finished before the stop count as done
      stopped(report, sink);
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
  install_signal_handlers();
  const Job job = prepare(config, options.restart);
  if (options.dry_run) return plan_with_limits(job, options.kokkos_args);
  const bool talk = !options.quiet && ranks::is_root();
  const std::string report_path = options.report_path.empty() ? job.spec.report_path : options.report_path;

  std::unique_ptr<OutputSink> sink = open_sink(job, options.restart);
  auto* file_output = dynamic_cast<FileOutput*>(sink.get());
  if (file_output && file_output->state() == FileOutput::State::already_complete) {
    if (talk)
      std::cout << "[discount_app] " << job.spec.output.path << " is already complete for this job; nothing to do\n";
    return 0;
  }
  FileOutput* fresh_output = file_output && file_output->state() == FileOutput::State::fresh ? file_output : nullptr;
  RunReport report = start_report(job, *sink);
  if (talk) announce(report, job.plan);

  Limits limits;
  std::exception_ptr failure =
      run_slabs(job, options, *sink, report, limits, !options.quiet || !report_path.empty(), talk);
  report.ranks = ranks::size();
  combine_rank_reports(report);
  apply_limits(report, limits);
  close_output(file_output, failure);
  const std::exception_ptr agreed = agree_on_outcome(failure);
  if (!agreed) publish(*sink, report);
  // Once, on every rank: the slowest rank's time is the job's.
  report.wall_seconds = ranks::max(std::chrono::duration<double>(Clock::now() - start).count());
  if (agreed) give_up(agreed, fresh_output, report, report_path);
  deliver_report(report, report_path, talk);
  return verify_after_run(config);
}

int plan_command(const Config& config) { return plan_with_limits(prepare(config), {}); }

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
