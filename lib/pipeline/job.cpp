#include "pipeline/job.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "common/error.hpp"
#include "io/input.hpp"
#include "io/output.hpp"
#include "kernels/slicing.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/signals.hpp"
#include "pipeline/system_memory.hpp"
#include "plan/plan.hpp"

#ifndef DISCOUNT_VERSION
#define DISCOUNT_VERSION "0.0.0"
#endif
#ifndef DISCOUNT_GIT_HASH
#define DISCOUNT_GIT_HASH "unknown"
#endif

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
  return std::string("discount_app ") + DISCOUNT_VERSION + " (git " + DISCOUNT_GIT_HASH + ")\n" + "Kokkos " +
         std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100) + ", backends:" + backends + arch + "\n" + "HDF5 " +
         std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release) + "\n";
}

namespace {

struct Prepared {
  std::unique_ptr<InputSource> input;
  Range dates, ids;
  Plan plan;
  std::string fingerprint;
};

Range select(const std::optional<Range>& wanted, std::int64_t extent, const char* key, const char* what) {
  if (!wanted) return {0, extent};
  if (wanted->end > extent)
    throw config_error(std::string(key) + " = [" + std::to_string(wanted->begin) + ", " + std::to_string(wanted->end) +
                       "] exceeds the " + std::to_string(extent) + " " + what + " of the input");
  return *wanted;
}

Prepared prepare(const Config& config) {
  if (config.compute.kernel == KernelKind::blas && !config.input.synthetic &&
      !(config.input.axes[0] == Axis::date && config.input.axes[1] == Axis::id))
    throw config_error(config.source_path +
                       ": compute.kernel: blas needs input.axes [date, id, num]; use kernel: mdrange for other orders");
  Prepared p;
  p.input = open_input(config.input);
  const InputShape& shape = p.input->shape();
  p.dates = select(config.input.dates, shape.dates, "input.dates", "dates");
  p.ids = select(config.input.ids, shape.ids, "input.ids", "ids");

  PlanRequest request;
  request.dates = p.dates.size();
  request.ids = p.ids.size();
  request.nums = shape.nums;
  request.chunk_axis = config.memory.chunk_axis;
  request.pipeline_depth = config.memory.pipeline_depth;
  request.device_copies = needs_device_copies(config.compute.space);
  request.host_budget = config.memory.host_budget.resolve(host_available_bytes());
  request.device_budget = request.device_copies ? config.memory.device_budget.resolve(device_free_bytes()) : 0;
  request.max_slab = config.memory.max_slab.resolve(request.host_budget);
  p.plan = make_plan(request);

  // What identifies the job's result: not budgets or slicing, so a resumed
  // job may use other memory settings.
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

int print_plan(const Config& config, const Prepared& p) {
  std::cout << "input          " << p.input->describe() << "\n";
  std::cout << "selection      dates [" << p.dates.begin << ", " << p.dates.end << "), ids [" << p.ids.begin << ", "
            << p.ids.end << ")\n";
  std::cout << "kernel         " << execution_space_name(config.compute.space) << ", "
            << slicing_text(config, *p.input) << "\n";
  std::cout << p.plan.describe();
  return 0;
}

}  // namespace

int plan_command(const Config& config) { return print_plan(config, prepare(config)); }

int run_command(const Config& config, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  install_signal_handlers();
  Prepared p = prepare(config);
  if (options.dry_run) return print_plan(config, p);

  std::unique_ptr<OutputSink> sink;
  FileOutput* file_output = nullptr;
  ChecksumOutput* checksum = nullptr;
  if (config.output.mode == OutputMode::file) {
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
    spec.provenance = version_text() + "input: " + p.input->describe() + "\n" + config.to_yaml();
    auto output = std::make_unique<FileOutput>(spec);
    file_output = output.get();
    sink = std::move(output);
    if (file_output->state() == FileOutput::State::already_complete) {
      if (!options.quiet)
        std::cout << "[discount_app] " << config.output.file << " is already complete for this job; nothing to do\n";
      return 0;
    }
  } else {
    auto output = std::make_unique<ChecksumOutput>(p.input->axes(), p.dates.size(), p.ids.size(),
                                                   p.input->shape().nums);
    checksum = output.get();
    sink = std::move(output);
  }

  RunReport report;
  report.version = DISCOUNT_VERSION;
  report.input = p.input->describe();
  report.output = sink->describe();
  report.space = execution_space_name(config.compute.space);
  report.kernel = config.compute.kernel == KernelKind::blas ? "blas" : "mdrange";
  report.slicing = slicing_text(config, *p.input);
  report.plan = p.plan.describe();
  report.config_yaml = config.to_yaml();
  if (!options.quiet) {
    std::cout << "[discount_app] input  " << report.input << "\n[discount_app] output " << report.output
              << "\n[discount_app] kernel " << report.space << ", " << report.slicing << "\n[discount_app] plan   "
              << p.plan.slabs.size() << " slab(s) of up to " << format_bytes(p.plan.slab_bytes) << ", host "
              << format_bytes(p.plan.host_bytes);
    if (p.plan.request.device_copies) std::cout << ", device " << format_bytes(p.plan.device_bytes);
    std::cout << std::endl;
  }

  bool fresh_output = file_output && file_output->state() == FileOutput::State::fresh;
  try {
    quiet_openmp_warning();
    std::vector<std::string> args{"discount_app"};
    args.insert(args.end(), options.kokkos_args.begin(), options.kokkos_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    // A caller that already runs Kokkos (tests, an embedding code) keeps it.
    std::optional<Kokkos::ScopeGuard> kokkos;
    if (!Kokkos::is_initialized()) kokkos.emplace(argc, argv.data());
    PipelineJob job;
    job.config = &config;
    job.plan = &p.plan;
    job.input = p.input.get();
    job.sink = sink.get();
    job.dates = p.dates;
    job.ids = p.ids;
    job.stop = &stop_signal();
    job.progress = !options.quiet;
    run_pipeline(job, report);
  } catch (const Error& e) {
    // Bad input data found mid-run: a fresh partial holds nothing worth keeping.
    if (e.code() == ExitCode::data_invalid && fresh_output) ::unlink(file_output->partial_path().c_str());
    // Otherwise keep what was written for the resume, if the disk still lets us.
    if (e.code() != ExitCode::data_invalid) {
      try {
        sink->checkpoint();
      } catch (const Error&) {
      }
    }
    throw;
  }

  if (report.interrupted) {
    sink->checkpoint();  // the slabs finished before the stop count as done
    report.outcome = "interrupted";
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string where = file_output ? "; progress saved in " + file_output->partial_path() : "";
    if (!config.report.empty() || !options.report_path.empty())
      write_report(report, options.report_path.empty() ? config.report : options.report_path);
    throw Error(ExitCode::interrupted, std::string("interrupted by ") + signal_name(stop_signal().load()) + " after " +
                                           std::to_string(report.slabs_skipped + report.slabs_run) + " of " +
                                           std::to_string(report.slabs_total) + " slabs" + where +
                                           "; run the same command again to resume");
  }
  sink->finish();
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (checksum) {
    report.has_checksum = true;
    report.date_sums = checksum->date_sums();
    report.date_bits = checksum->date_bits();
    report.global_bits = checksum->global_bits();
  }
  if (!options.quiet) std::cout << report.to_text() << std::flush;
  const std::string report_path = options.report_path.empty() ? config.report : options.report_path;
  if (!report_path.empty()) write_report(report, report_path);
  if (config.verify != VerifyMode::none) {
    VerifyOptions verify;
    verify.full = config.verify == VerifyMode::full;
    return verify_command(config, verify);
  }
  return 0;
}

}  // namespace discount
