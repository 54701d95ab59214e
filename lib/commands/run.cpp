// `discount_app run`: prepare, open (or resume) the output, start Kokkos,
// take the link limits (lib/probe), run this rank's slabs, agree across ranks,
// publish, report. run_command only orders the steps and the collectives.
#include <sys/stat.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "commands/commands.hpp"
#include "commands/job.hpp"
#include "git_hash.hpp"  // generated at build time: DISCOUNT_GIT_HASH
#include "commands/rank_reports.hpp"
#include "common/error.hpp"
#include "common/startup.hpp"
#include "common/fingerprint.hpp"
#include "io/output/identity.hpp"
#include "io/output/output.hpp"
#include "io/hdf5/read_set_hdf5.hpp"
#include "pipeline/input_sums.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/signals.hpp"
#include "backend/system_memory.hpp"
#include "probe/job_limits.hpp"
#include "ranks/ranks.hpp"
#include "report/progress.hpp"
#include "report/report.hpp"
#include "report/report_job.hpp"
#include "report/runs.hpp"

#ifndef DISCOUNT_VERSION
#define DISCOUNT_VERSION "0.0.0"
#endif

namespace discount {

namespace {

using Clock = std::chrono::steady_clock;

// What rank 0 found when it opened the output, as every rank learns it.
enum class OutputState { open, complete };

// Creates or resumes the output. Under MPI rank 0 does it alone (checks,
// creation, resume), then the other ranks open what it made.
std::unique_ptr<OutputSink> open_sink(const Job& job, bool restart) {
  OutputSpec spec = job.spec.output;
  if (job.spec.output_mode == OutputMode::checksum)
    return std::make_unique<ChecksumOutput>(spec.axes, spec.dates, spec.ids, spec.nums);
  spec.restart = restart;
  spec.fingerprint = job.fingerprint;
  if (const std::string other = identity_with_other_nonfinite(job.spec.identity); !other.empty())
    spec.fingerprint_other_nonfinite = fingerprint_of(other);
  spec.slabs = static_cast<std::int64_t>(job.plan.slabs.size());
  spec.read_piece_bytes = job.plan.slab_bytes;
  for (const Slab& slab : job.plan.slabs)
    spec.slab_units.push_back(spec.chunk_axis == Axis::date ? slab.dates : slab.ids);
  spec.existing = job.existing;
  spec.mpi_comm = ranks::communicator();
  spec.input_sums = input_sums_reader(*job.input, job.spec.pipeline, job.plan);
  spec.decor.version = std::string(DISCOUNT_VERSION) + " (git " + DISCOUNT_GIT_HASH + ")";
  spec.provenance = version_text() + "input: " + job.input->describe() + "\n" + job.spec.report.config_yaml;
  std::unique_ptr<FileOutput> output;
  ranks::collectively([&] {
    if (ranks::is_root()) output = std::make_unique<FileOutput>(spec);
  });
  // Rank 0's finding on every rank: the output is already complete.
  const bool root_complete = output && output->state() == FileOutput::State::already_complete;
  const OutputState state = ranks::max(int(root_complete)) ? OutputState::complete : OutputState::open;
  if (state == OutputState::complete) {
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
  describe_job(report, *job.input, job.plan, job.spec.pipeline.dates, job.spec.pipeline.ids);
  report.stages = empty_stages(job.plan.request.device_copies);
  return report;
}

// Status lines: time-stamped when stdout is a log (report/progress.hpp).
void announce(const RunReport& report, const Plan& plan, const std::string& layout) {
  const std::string tag = status_prefix();
  std::cout << tag << "input  " << report.input << "\n"
            << tag << "output " << report.output << "\n"
            << tag << "kernel " << report.space << ", " << report.slicing << "\n"
            << tag << "plan   " << plan.slabs.size() << " slab(s) of up to " << format_bytes(plan.slab_bytes)
            << ", host " << format_bytes(plan.host_bytes);
  if (plan.request.device_copies) std::cout << ", device " << format_bytes(plan.device_bytes);
  if (ranks::multi()) std::cout << ", per rank; " << ranks::size() << " ranks";
  std::cout << "\n"
            << tag << "chunk  " << axis_name(plan.request.chunk_axis) << " (" << plan.request.chunk_axis_reason << ")";
  if (!layout.empty()) std::cout << "\n" << tag << "layout " << layout;
  std::cout << std::endl;
}

[[noreturn]] void stopped(const RunReport& report, const OutputSink& sink, int signo) {
  const std::string where = sink.progress_path().empty() ? "" : "; progress saved in " + sink.progress_path();
  const std::string done = ranks::multi()
                               ? " after this rank's " + std::to_string(report.slabs_run) + " slab(s) of this run"
                               : " after " + std::to_string(report.slabs_skipped + report.slabs_run) + " of " +
                                     std::to_string(report.slabs_total) + " slabs";
  throw Error(ExitCode::interrupted, std::string("interrupted by ") + signal_name(signo) + done + where +
                                         "; run the same command again to resume");
}

// Keeps what was written for the resume, if the disk still lets us; bad
// input data found mid-run leaves nothing worth keeping.
void save_progress(const std::exception_ptr& failure, OutputSink& sink) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    if (e.code() == ExitCode::data_invalid) return;
  } catch (...) {}
  try {
    sink.checkpoint();
  } catch (const Error&) {}
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
    limits = measure
                 ? job_limits(job.spec.limits, job.plan, options.remeasure, version_text(), job.spec.knobs.cache_dir)
                 : configured_limits(job.spec.limits);
    startup::mark(limits.kernel.cached ? "limits (cached)" : "limits");
    if (job.plan.request.device_copies) {
      report.gpu = device_name();
      startup::mark("GPU name");
    }
    if (talk) std::cout << status_prefix() << "limits " << limits_text(limits) << std::endl;
    PipelineJob pipeline;
    pipeline.spec = &job.spec.pipeline;
    pipeline.plan = &job.plan;
    pipeline.input = job.input.get();
    pipeline.sink = &sink;
    pipeline.stop = options.stop ? options.stop : &stop_signal();
    std::optional<ProgressPrinter> progress;
    if (talk) {
      // "rank 0 of 4: " under MPI (rank 0 prints its own share's progress).
      progress.emplace(ranks::multi()
                           ? "rank " + std::to_string(ranks::rank()) + " of " + std::to_string(ranks::size()) + ": "
                           : "");
    }
    if (progress || options.on_progress)
      pipeline.progress = [&progress, &options](const WriteProgress& p) {
        if (progress) {
          if (p.done)
            progress->finish();
          else
            progress->slab_written(p.written, p.total, p.bytes, p.seconds);
        }
        // In-process callers get the progress line's figures after every slab.
        if (options.on_progress && !p.done && p.written > 0)
          options.on_progress(progress_fields("", p.written, p.total, p.bytes, p.seconds));
      };
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

// The input's chunk decoding after this rank's slabs, made the job's: bytes,
// chunks and thread-seconds summed over the ranks, the most threads any
// rank decoded on. Every rank reads the same input, so names the same
// pipeline. Collective.
void add_decompression(RunReport& report, const InputSource& input) {
  DecodeStats d = input.decode_stats();
  if (ranks::multi()) {
    std::vector<std::uint64_t> counts{d.stored_bytes, d.raw_bytes, d.chunks};
    std::vector<double> busy{d.decode_busy_seconds, d.read_busy_seconds, d.locate_busy_seconds};
    ranks::sum(counts);
    ranks::sum(busy);
    d.stored_bytes = counts[0];
    d.raw_bytes = counts[1];
    d.chunks = counts[2];
    d.decode_busy_seconds = busy[0];
    d.read_busy_seconds = busy[1];
    d.locate_busy_seconds = busy[2];
    d.threads = static_cast<unsigned>(ranks::max(static_cast<int>(d.threads)));
  }
  report.decompression = d;
}

// Every rank, whatever its outcome, before rank 0 reopens the file alone.
void close_output(OutputSink& output, std::exception_ptr& failure) {
  try {
    output.close_collective();
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
  } catch (...) { return std::current_exception(); }
}

// The ranks' compression figures added up (the slowest rank's time), the
// line on stderr from rank 0, and the report's object. Collective.
void report_compression(const OutputSink& sink, RunReport& report) {
  CompressStats z = sink.compression();
  std::vector<std::uint64_t> counts{z.parts, z.raw_bytes, z.stored_bytes, z.threads, z.parts > 0 ? 1u : 0u};
  ranks::sum(counts);
  std::vector<double> busy{z.busy_seconds, z.writer_seconds, z.store_seconds, z.slab_wait_seconds,
                           z.queue_wait_seconds};
  ranks::sum(busy);
  z.parts = counts[0];
  z.raw_bytes = counts[1];
  z.stored_bytes = counts[2];
  z.threads = static_cast<unsigned>(counts[3]);
  z.busy_seconds = busy[0];
  z.writer_seconds = busy[1];
  z.store_seconds = busy[2];
  z.slab_wait_seconds = busy[3];
  z.queue_wait_seconds = busy[4];
  z.ranks = static_cast<unsigned>(counts[4]);
  z.seconds = ranks::max(z.seconds);
  z.tail_seconds = ranks::max(z.tail_seconds);
  z.starved_seconds = ranks::max(z.starved_seconds);
  z.closing_seconds = ranks::max(z.closing_seconds);
  if (z.raw_bytes == 0) return;
  if (ranks::is_root()) std::cerr << "discount_app: compression: " << z.codec << ", " << describe_stats(z) << std::endl;
  report.compression = z;
}

// Only a job every rank finished is published: each rank first does its
// share of the finishing work (compressing its parts), then rank 0 makes the
// result visible; then the checksums of every rank are added up. Collective.
void publish(OutputSink& sink, RunReport& report) {
  ranks::collectively([&] { sink.finish_share(ranks::rank(), ranks::size()); });
  ranks::collectively([&] {
    if (ranks::is_root()) sink.publish();
  });
  report_compression(sink, report);
  const RankSums sum{[](std::vector<double>& v) { ranks::sum(v); },
                     [](std::vector<std::uint64_t>& v) { ranks::sum(v); }};
  if (std::optional<OutputChecksums> checksums = sink.combined_checksums(sum)) {
    report.has_checksum = true;
    report.date_sums = std::move(checksums->date_sums);
    report.date_bits = std::move(checksums->date_bits);
    report.global_bits = checksums->global_bits;
  }
}

// After a failure every rank agreed on: bad input data leaves no fresh
// partial output behind; an interrupted run still writes its report.
[[noreturn]] void give_up(const std::exception_ptr& agreed, OutputSink& output, RunReport& report,
                          const std::string& report_path) {
  try {
    std::rethrow_exception(agreed);
  } catch (const Error& e) {
    if (e.code() == ExitCode::data_invalid && ranks::is_root()) output.discard_if_fresh();
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
void add_job_runs(RunReport& report, const OutputSink& output, const Plan& plan) {
  if (!ranks::is_root()) return;
  try {
    const std::optional<RunHistory> history = output.run_history();
    if (!history) return;
    report.runs = job_runs(*history, run_geometry(plan));
    report.run = output.run_number();
    report.unit_axis = history->unit_axis;
  } catch (const Error&) { report.runs.clear(); }
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

namespace {

// The ranks' sign of each other's work while one waits in a collective
// (ranks::set_progress): the output's progress record, which every rank
// writes at its checkpoints (output.checkpoint_seconds). None without a file.
std::function<std::uint64_t()> progress_mark(const std::string& path) {
  if (path.empty()) return {};
  return [path] {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::uint64_t{0};
    return (static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
            static_cast<std::uint64_t>(st.st_mtim.tv_nsec)) *
               31u +
           static_cast<std::uint64_t>(st.st_size);
  };
}

}  // namespace

// Orders the steps and the ranks' collectives; every rank runs each
// collective step, whatever its own outcome so far.
int run_command(const Config& config, const RunOptions& options) {
  const auto start = Clock::now();
  ranks::set_timeout(config.ranks.timeout_seconds);
  startup::mark("command line and config");
  if (!options.stop) install_signal_handlers();
  const Job job = prepare(config, options.restart);
  startup::mark("resolve and plan");
  const std::string report_path = options.report_path.empty() ? job.spec.report_path : options.report_path;
  // Nothing the job reads is written or deleted (io/posix/read_set.hpp).
  ranks::collectively([&] {
    if (ranks::is_root())
      check_run_writes(config, options.restart, report_path, options.report_path.empty() ? "report" : "--report");
  });
  if (options.dry_run) {
    PlanPrint how;
    how.probe_io = false;  // a dry run writes nothing
    how.verbose = true;    // the whole plan, every rate's source and the resolved config
    return plan_with_limits(job, options.kokkos_args, how, std::chrono::duration<double>(Clock::now() - start).count());
  }
  const bool talk = !options.quiet && ranks::is_root();

  std::unique_ptr<OutputSink> sink = open_sink(job, options.restart);
  ranks::set_progress(progress_mark(sink->progress_path()));
  startup::mark("output");
  if (sink->already_complete()) {
    if (talk)
      std::cout << status_prefix() << job.spec.output.path << " is already complete for this job; nothing to do\n";
    return 0;
  }
  RunReport report = start_report(job, *sink);
  if (talk) announce(report, job.plan, layout_text(job.spec));

  Limits limits;
  std::exception_ptr failure = run_slabs(job, options, *sink, report, limits,
                                         !options.quiet || !report_path.empty() || options.report_out, talk);
  report.ranks = ranks::size();
  if (ranks::multi()) report.rank_hosts = ranks::hosts();
  report.startup = startup::breakdown();
  add_decompression(report, *job.input);
  combine_rank_reports(report);
  report.kernel_on_pieces = job.plan.request.kernel_on_pieces();
  apply_limits(report, limits);
  close_output(*sink, failure);
  const std::exception_ptr agreed = agree_on_outcome(failure);
  if (!agreed) publish(*sink, report);
  report.collective_seconds = ranks::max(ranks::collective_seconds());
  // Once, on every rank: the slowest rank's time is the job's.
  report.wall_seconds = ranks::max(std::chrono::duration<double>(Clock::now() - start).count());
  add_job_runs(report, *sink, job.plan);
  if (agreed) give_up(agreed, *sink, report, report_path);
  deliver_report(report, report_path, talk);
  if (options.report_out) *options.report_out = report;
  return verify_after_run(config);
}

}  // namespace discount
