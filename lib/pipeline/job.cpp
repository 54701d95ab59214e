#include "pipeline/job.hpp"

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
#include "kernels/slicing.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/signals.hpp"
#include "pipeline/system_memory.hpp"
#include "plan/plan.hpp"
#include "report/limits.hpp"
#include "ranks/ranks.hpp"

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

struct Prepared {
  std::unique_ptr<InputSource> input;
  Range dates, ids;
  Plan plan;
  std::string fingerprint;
  std::uint64_t direct_piece = 0;  // O_DIRECT bounce buffer per writer thread (0: no O_DIRECT)
};

Range select(const std::optional<Range>& wanted, std::int64_t extent, const char* key, const char* what) {
  if (!wanted) return {0, extent};
  if (wanted->end > extent)
    throw config_error(std::string(key) + " = [" + std::to_string(wanted->begin) + ", " + std::to_string(wanted->end) +
                       "] exceeds the " + std::to_string(extent) + " " + what + " of the input");
  return *wanted;
}

// Opens the input and makes the plan. Collective under MPI: budgets given as
// a percentage resolve against what each rank sees (the node's free memory
// shared by the node's ranks; a GPU's free memory shared by the ranks using
// it), and every rank takes the smallest, so all ranks make the same plan.
Prepared prepare(const Config& config) {
  Prepared p;
  PlanRequest request;
  ranks::collectively([&] {
    require_compiled_parts(config);
    if (config.compute.kernel == KernelKind::blas && !config.input.synthetic &&
        !(config.input.axes[0] == Axis::date && config.input.axes[1] == Axis::id))
      throw config_error(config.source_path +
                         ": compute.kernel: blas needs input.axes [date, id, num]; use kernel: mdrange for other orders");
    p.input = open_input(config.input);
    const InputShape& shape = p.input->shape();
    p.dates = select(config.input.dates, shape.dates, "input.dates", "dates");
    p.ids = select(config.input.ids, shape.ids, "input.ids", "ids");
    request.dates = p.dates.size();
    request.ids = p.ids.size();
    request.nums = shape.nums;
    request.chunk_axis = config.memory.chunk_axis;
    request.pipeline_depth = config.memory.pipeline_depth;
    request.device_copies = needs_device_copies(config.compute.space);
    request.host_budget = config.memory.host_budget.resolve(host_available_bytes() / ranks::local_size());
    if (request.device_copies) {
      const int devices = std::max(1, visible_devices());
      const int sharing = (ranks::local_size() + devices - 1) / devices;
      const std::uint64_t free_bytes = device_free_bytes(ranks::local_device(visible_devices()));
      request.device_budget = config.memory.device_budget.resolve(free_bytes / sharing);
    }
  });
  request.host_budget = ranks::min(request.host_budget);
  request.device_budget = ranks::min(request.device_budget);
  request.max_slab = config.memory.max_slab.resolve(request.host_budget);
  // Sized for the rank with the most writer threads, so that every rank makes
  // the same plan.
  if (config.output.mode == OutputMode::file && config.output.direct_io) {
    const unsigned threads = unsigned(ranks::max(int(DirectWriter::threads())));
    p.direct_piece = DirectWriter::piece_for(request.host_budget, threads);
    request.staging_bytes = threads * p.direct_piece;
  }
  p.plan = ranks::collectively([&] { return make_plan(request); });

  // What identifies the job's result: not budgets, slicing or rank count, so
  // a resumed job may use other memory settings or another number of ranks.
  const auto& in = config.input;
  std::string identity = "discount_app/1|" + p.input->identity() + "|" + in.multiplier + "|" + in.discount + "|" +
                         axis_name(in.axes[0]) + axis_name(in.axes[1]) + axis_name(in.axes[2]) + "|" +
                         std::to_string(p.dates.begin) + ":" + std::to_string(p.dates.end) + "|" +
                         std::to_string(p.ids.begin) + ":" + std::to_string(p.ids.end) + "|" +
                         (in.nonfinite == NonFinite::error ? "error" : "propagate") + "|" + config.output.dataset +
                         "|" + axis_name(config.memory.chunk_axis);
  p.fingerprint = fingerprint_of(identity);
  return p;
}

std::string slicing_text(const Config& config, const InputSource& input) {
  if (config.compute.kernel == KernelKind::blas) return "KokkosBlas::mult over whole slabs";
  return make_slicing(input.axes(), config.compute.parallel_dims, config.compute.tile).describe(input.axes());
}

// Kokkos 3.4 warns on stderr when OMP_PROC_BIND is unset; "false" is what an
// unset variable means for GCC's runtime, so setting it changes nothing else.
void quiet_openmp_warning() { ::setenv("OMP_PROC_BIND", "false", 0); }

}  // namespace

namespace {

// Under MPI every rank measures its own links at the same moment and the
// rates are added up: the whole job's ceiling under the same sharing of PCIe,
// host memory and GPUs as the run, to compare with the report's stage rates
// (every rank's bytes over the slowest rank's seconds). Four H200s copying at
// once reached 1.8x one, not 4x (docs/performance.md); one rank measuring
// while the others already streamed saw a third of its link. Configured
// limits are taken as the whole job's. Collective; the same on every rank.
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
Limits job_limits(const Config& config, const Plan& plan) {
  std::uint64_t cap = plan.request.host_budget / 4;
  if (plan.request.device_copies) cap = std::min(cap, plan.request.device_budget / 4);
  if (cap < (std::uint64_t{32} << 20) || !config.limits.measure) return configured_limits(config.limits);
  ranks::barrier();
  Limits limits = measure_limits(config.limits, plan.request.device_copies, cap);
  if (ranks::multi()) add_up_ranks(limits);
  return limits;
}

std::string limits_text(const Limits& limits) {
  std::string text = limits.describe();
  if (ranks::multi())
    text += "; h2d, d2h and kernel: " + std::to_string(ranks::size()) + " ranks measuring at once, added up";
  return text;
}

int print_plan(const Config& config, const Prepared& p, const Limits& limits) {
  std::cout << "input          " << p.input->describe() << "\n";
  std::cout << "selection      dates [" << p.dates.begin << ", " << p.dates.end << "), ids [" << p.ids.begin << ", "
            << p.ids.end << ")\n";
  std::cout << "kernel         " << execution_space_name(config.compute.space) << ", "
            << slicing_text(config, *p.input) << "\n";
  std::cout << p.plan.describe();
  if (config.output.mode == OutputMode::file) {
    const std::uint64_t free_bytes = free_disk_bytes(config.output.file);
    std::cout << "output         " << format_bytes(p.plan.output_bytes()) << " to " << config.output.file << "; "
              << (free_bytes ? format_bytes(free_bytes) + " free there" : std::string("free space unknown"))
              << (free_bytes && free_bytes < p.plan.output_bytes() ? "  ** NOT ENOUGH: the run will stop (exit 74) **"
                                                                  : "")
              << "\n";
  }
  if (ranks::multi())
    std::cout << "ranks          " << ranks::size() << " (each takes a contiguous share of the slabs still to do, about "
              << (p.plan.slabs.size() + ranks::size() - 1) / ranks::size() << ")\n";
  std::cout << "limits         " << limits_text(limits) << "\n";
  std::cout << describe_prediction(p.plan, predict(p.plan, limits));
  std::cout << "\nresolved configuration (every default filled in; `discount_app config` prints the same):\n"
            << config.to_yaml();
  return 0;
}

// The Kokkos command line: the user's --kokkos-* options, plus, under MPI,
// this rank's GPU and share of the cores.
std::vector<std::string> kokkos_arguments(const std::vector<std::string>& user_args) {
  std::vector<std::string> args{"discount_app"};
  args.insert(args.end(), user_args.begin(), user_args.end());
  for (auto& a : ranks::kokkos_rank_args(user_args, visible_devices(),
                                         ranks::threads_per_rank(process_cpu_count(), job_cpu_count())))
    args.push_back(a);
  return args;
}

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
int plan_with_limits(const Config& config, const Prepared& p, const std::vector<std::string>& kokkos_args) {
  Limits limits = configured_limits(config.limits);
  if (config.limits.measure) {
    std::optional<Kokkos::ScopeGuard> kokkos;
    start_kokkos(kokkos, kokkos_args);
    limits = job_limits(config, p.plan);
  }
  return ranks::is_root() ? print_plan(config, p, limits) : 0;
}

}  // namespace

int plan_command(const Config& config) { return plan_with_limits(config, prepare(config), {}); }

namespace {

// Creates or resumes the output. Under MPI rank 0 does it alone (checks,
// creation, resume), then the other ranks open what it made.
std::unique_ptr<OutputSink> open_sink(const Config& config, const RunOptions& options, const Prepared& p) {
  if (config.output.mode == OutputMode::checksum)
    return std::make_unique<ChecksumOutput>(p.input->axes(), p.dates.size(), p.ids.size(), p.input->shape().nums);
  OutputSpec spec;
  spec.path = config.output.file;
  spec.input_file = config.input.file;
  spec.dataset = config.output.dataset;
  spec.overwrite = config.output.overwrite;
  spec.restart = options.restart;
  spec.axes = p.input->axes();
  spec.dates = p.dates.size();
  spec.ids = p.ids.size();
  spec.nums = p.input->shape().nums;
  spec.chunk_axis = config.memory.chunk_axis;
  spec.fingerprint = p.fingerprint;
  spec.checkpoint_seconds = config.output.checkpoint_seconds;
  spec.direct_io = config.output.direct_io;
  spec.direct_piece = p.direct_piece;
  spec.provenance = version_text() + "input: " + p.input->describe() + "\n" + config.to_yaml();
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

// Each rank's stage figures added up (bytes, slabs) or maximised (seconds:
// ranks work side by side), so rank 0 reports the whole job.
// report.stages has the same stages on every rank (run_command fills them
// before the pipeline starts), so every rank makes the same collectives.
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
}

}  // namespace

int run_command(const Config& config, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  install_signal_handlers();
  Prepared p = prepare(config);
  if (options.dry_run) return plan_with_limits(config, p, options.kokkos_args);
  if (options.device_path_only && config.output.mode != OutputMode::checksum)
    throw usage_error("--bench-device-path needs output.mode: checksum (it writes nothing)");
  const bool talk = !options.quiet && ranks::is_root();
  const std::string report_path = options.report_path.empty() ? config.report : options.report_path;

  std::unique_ptr<OutputSink> sink = open_sink(config, options, p);
  auto* file_output = dynamic_cast<FileOutput*>(sink.get());
  auto* checksum = dynamic_cast<ChecksumOutput*>(sink.get());
  if (file_output && file_output->state() == FileOutput::State::already_complete) {
    if (talk) std::cout << "[discount_app] " << config.output.file << " is already complete for this job; nothing to do\n";
    return 0;
  }

  RunReport report;
  report.version = DISCOUNT_VERSION;
  report.versions = version_text();
  report.host = host_name();
  report.input = p.input->describe();
  report.output = sink->describe();
  report.space = execution_space_name(config.compute.space);
  report.kernel = config.compute.kernel == KernelKind::blas ? "blas" : "mdrange";
  report.slicing = slicing_text(config, *p.input);
  report.plan = p.plan.describe();
  report.config_yaml = config.to_yaml();
  // Named and empty until the pipeline fills them: a rank that fails before
  // (or while) running still reports the same stages.
  report.stages = pipeline_stages(p.plan.request.device_copies);
  if (talk) {
    std::cout << "[discount_app] input  " << report.input << "\n[discount_app] output " << report.output
              << "\n[discount_app] kernel " << report.space << ", " << report.slicing << "\n[discount_app] plan   "
              << p.plan.slabs.size() << " slab(s) of up to " << format_bytes(p.plan.slab_bytes) << ", host "
              << format_bytes(p.plan.host_bytes);
    if (p.plan.request.device_copies) std::cout << ", device " << format_bytes(p.plan.device_bytes);
    if (ranks::multi()) std::cout << ", per rank; " << ranks::size() << " ranks";
    std::cout << std::endl;
  }

  const bool fresh_output = file_output && file_output->state() == FileOutput::State::fresh;
  // Every rank ends up here with its own outcome; the ranks then agree, and
  // only a job every rank finished is published.
  std::exception_ptr failure;
  Limits limits;
  try {
    std::optional<Kokkos::ScopeGuard> kokkos;
    start_kokkos(kokkos, options.kokkos_args);
    // Measured only for someone to read them (the summary or a JSON report
    // of rank 0); a quiet run without a report skips it. The same on every
    // rank: job_limits is collective.
    const bool shown = !options.quiet || !report_path.empty();
    limits = shown ? job_limits(config, p.plan) : configured_limits(config.limits);
    if (p.plan.request.device_copies) report.gpu = device_name();
    if (talk) std::cout << "[discount_app] limits " << limits_text(limits) << std::endl;
    PipelineJob job;
    job.config = &config;
    job.plan = &p.plan;
    job.input = p.input.get();
    job.sink = sink.get();
    job.dates = p.dates;
    job.ids = p.ids;
    job.stop = &stop_signal();
    job.progress = talk;
    job.rank = ranks::rank();
    job.ranks = ranks::size();
    job.skip_host_io = options.device_path_only;
    run_pipeline(job, report);
    if (report.interrupted) {
      sink->checkpoint();  // the slabs finished before the stop count as done
      const std::string where = file_output ? "; progress saved in " + file_output->partial_path() : "";
      const std::string done = ranks::multi() ? " after this rank's " + std::to_string(report.slabs_run) +
                                                    " slab(s) of this run"
                                              : " after " + std::to_string(report.slabs_skipped + report.slabs_run) +
                                                    " of " + std::to_string(report.slabs_total) + " slabs";
      throw Error(ExitCode::interrupted, std::string("interrupted by ") + signal_name(stop_signal().load()) + done +
                                             where + "; run the same command again to resume");
    }
    sink->flush();
  } catch (...) {
    failure = std::current_exception();
    // Keep what was written for the resume, if the disk still lets us; bad
    // input data found mid-run leaves nothing worth keeping.
    bool bad_data = false;
    try {
      std::rethrow_exception(failure);
    } catch (const Error& e) {
      bad_data = e.code() == ExitCode::data_invalid;
    } catch (...) {
    }
    if (!bad_data) {
      try {
        sink->checkpoint();
      } catch (const Error&) {
      }
    }
  }

  report.ranks = ranks::size();
  combine_rank_reports(report);
  apply_limits(report, limits);
  report.wall_seconds = ranks::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  // Every rank, whatever its outcome, before rank 0 reopens the file alone.
  if (file_output) {
    try {
      file_output->close_collective();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  try {
    ranks::agree(failure);
  } catch (const Error& e) {
    if (e.code() == ExitCode::data_invalid && fresh_output && ranks::is_root())
      ::unlink(file_output->partial_path().c_str());
    if (e.code() == ExitCode::interrupted && ranks::is_root() && !report_path.empty()) {
      report.outcome = "interrupted";
      write_report(report, report_path);
    }
    throw;
  }
  ranks::collectively([&] {
    if (ranks::is_root()) sink->publish();
  });
  if (options.device_path_only) report.outcome = "device-path benchmark (no reads, no writes, no checksum)";
  if (checksum && !options.device_path_only) {
    checksum->combine_ranks();
    report.has_checksum = true;
    report.date_sums = checksum->date_sums();
    report.date_bits = checksum->date_bits();
    report.global_bits = checksum->global_bits();
  }
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ranks::is_root()) {
    if (talk) std::cout << report.to_text() << std::flush;
    if (!report_path.empty()) write_report(report, report_path);
  }
  if (config.verify != VerifyMode::none) {
    int status = 0;
    ranks::collectively([&] {
      if (!ranks::is_root()) return;
      VerifyOptions verify;
      verify.full = config.verify == VerifyMode::full;
      status = verify_command(config, verify);
    });
    return status;
  }
  return 0;
}

}  // namespace discount
