#include "embed/embed.hpp"

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include "commands/commands.hpp"
#include "common/error.hpp"
#include "backend/gpu_runtime.hpp"
#include "common/host_parallel.hpp"
#include "backend/kokkos_threads.hpp"
#include "embed/multiply_direct.hpp"
#include "embed/pinned_arrays.hpp"
#include "io/output/memory_output.hpp"
#include "kernels/apply.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/signals.hpp"
#include "plan/plan.hpp"
#include "resolve/resolve.hpp"

namespace discount::embed {

namespace {
bool g_started = false;
std::mutex g_kokkos_mutex;
}  // namespace

void ensure_kokkos() {
  std::lock_guard<std::mutex> lock(g_kokkos_mutex);
  if (Kokkos::is_initialized()) return;
  ::setenv("OMP_PROC_BIND", "false", 0);  // as the CLI: Kokkos 3.4 warns when it is unset
  std::vector<std::string> args = kokkos_arguments(prepare_kokkos_threads({}));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  Kokkos::initialize(argc, argv.data());
  g_started = true;
  keep_staging(true);
}

void finalize_kokkos() {
  std::lock_guard<std::mutex> lock(g_kokkos_mutex);
  keep_staging(false);  // kept pinned blocks go before the GPU runtime does
  unpin_all_arrays();
  if (g_started && Kokkos::is_initialized()) Kokkos::finalize();
  g_started = false;
}

std::uint64_t release_buffers() {
  const std::uint64_t bytes = kept_staging_bytes();
  release_kept_staging();
  return bytes + unpin_all_arrays();
}

std::uint64_t kept_buffer_bytes() { return kept_staging_bytes(); }

bool kokkos_started() { return g_started && Kokkos::is_initialized(); }

bool device_memory_is_separate() { return needs_device_copies(Space::device); }

RunReport run_job(const Config& config, const std::atomic<int>* stop, const Progress& progress) {
  ensure_kokkos();
  RunOptions options;
  options.quiet = true;
  options.stop = stop;
  options.on_progress = progress;
  RunReport report;
  report.outcome = "already complete";  // run_command fills it when it runs
  options.report_out = &report;
  run_command(config, options);
  return report;
}

namespace {

using Clock = std::chrono::steady_clock;

Config multiply_config(const MultiplyRequest& request) {
  Config config;
  config.source_path = "multiply()";
  config.input.axes = request.axes;
  config.input.nonfinite = NonFinite::propagate;  // NumPy's rule: NaN/Inf go through
  config.output.mode = OutputMode::checksum;      // no file: no O_DIRECT staging in the plan
  config.compute.space = request.space;
  config.compute.parallel_dims = request.parallel_dims;
  if (request.device_budget) config.memory.device_budget = *request.device_budget;
  if (request.host_budget) config.memory.host_budget = *request.host_budget;
  config.memory.chunk_axis = request.chunk_axis;
  config.limits.measure = false;
  return config;
}

// All three arrays already in device memory: one kernel over them, no slabs
// and no host round trip (the budgets cut host staging, of which there is none).
void multiply_on_device(const MultiplyRequest& request, const JobSpec& spec, RunReport& report) {
  using Memory = Kokkos::DefaultExecutionSpace::memory_space;
  const auto& d = request.disc.shape;
  Slab whole;  // the arrays as one slab
  whole.dates = {0, spec.plan.dates};
  whole.ids = {0, spec.plan.ids};
  whole.nums = spec.plan.nums;
  Kokkos::fence();  // work other libraries queued on these arrays is finished first
  const auto t0 = Clock::now();
  Kokkos::DefaultExecutionSpace exec;
  const ConstFlatView<Memory> mult(static_cast<const double*>(request.mult.data),
                                   static_cast<std::size_t>(request.mult.elements()));
  const ConstSlabView<Memory> in(static_cast<const double*>(request.disc.data), d[0], d[1], d[2]);
  const SlabView<Memory> out(static_cast<double*>(request.out.data), d[0], d[1], d[2]);
  apply_mdrange(exec, spec.pipeline.slicing, mult, in, out, geometry(request.axes, whole).mult_stride);
  exec.fence();
  check_device_errors("discount::apply (device arrays)");
  StageStats kernel;
  kernel.name = "kernel";
  kernel.bytes = 2 * static_cast<std::uint64_t>(request.disc.elements()) * sizeof(double);
  kernel.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  kernel.slabs = 1;
  report.stages = {kernel};
  report.slabs_total = report.slabs_run = 1;
}

// Host arrays through the pipeline: slabs staged, computed and copied out.
void multiply_pipelined(const JobSpec& spec, const Plan& plan, MemoryInput& input, MemoryOutput& sink,
                        RunReport& report, const std::atomic<int>* stop, const Progress& progress) {
  report.stages = empty_stages(plan.request.device_copies);
  PipelineJob job;
  job.spec = &spec.pipeline;
  job.plan = &plan;
  job.input = &input;
  job.sink = &sink;
  job.stop = stop;
  if (progress)
    job.progress = [&progress](const WriteProgress& p) {
      if (!p.done && p.written > 0) progress(progress_fields("", p.written, p.total, p.bytes, p.seconds));
    };
  run_pipeline(job, report);
  // As the CLI's report says; the package pins arrays only for calls that ran
  // so (piece by piece on a GPU, not through the staging ring).
  report.kernel_on_pieces = plan.request.kernel_on_pieces();
}

// Host arrays pinned in place (embed/pinned_arrays.hpp) travel to and from
// a GPU without staging where their pieces are contiguous: those the caller
// says it pinned, whose whole range this process holds pinned.
ArrayRef pinned_in_place(ArrayRef a, const MultiplyRequest& request) {
  a.pinned = a.pinned && !request.device_arrays && a.type == ElementType::f64 && a.c_contiguous() &&
             array_is_pinned(a.data, static_cast<std::size_t>(a.elements()) * sizeof(double));
  return a;
}

}  // namespace

RunReport multiply(const MultiplyRequest& request, const std::atomic<int>* stop, const Progress& progress) {
  ensure_kokkos();
  const auto start = Clock::now();
  const Config config = multiply_config(request);
  check_config(config);
  const ArrayRef disc = pinned_in_place(request.disc, request), out = pinned_in_place(request.out, request);
  MemoryInput input(request.mult, disc, request.axes);
  SystemFacts facts = system_facts(config, input);
  facts.output_piece_threads = static_cast<int>(memory_threads());  // MemoryOutput::piece_threads()
  const JobSpec spec = resolve(config, facts);
  RunReport report;
  report.input = input.describe();
  if (disc.pinned || out.pinned)
    report.input += std::string(" (pinned in place: ") + (disc.pinned ? "disc" : "") +
                    (disc.pinned && out.pinned ? ", " : "") + (out.pinned ? "out" : "") + ")";
  report.space = execution_space_name(spec.pipeline.space);
  report.kernel = spec.report.kernel;
  report.slicing = spec.report.slicing;
  // Arrays the kernel takes as they are (device arrays, or host arrays in one
  // pass) go through the Kokkos kernel: there is no read for kernel: fused to
  // ride on.
  const auto whole_array_kernel = [&] {
    if (spec.pipeline.kernel != KernelKind::fused) return;
    report.kernel = kernel_name(KernelKind::mdrange);
    report.slicing = spec.pipeline.slicing.describe(request.axes);
  };
  if (request.device_arrays) {
    whole_array_kernel();
    // A build without a GPU backend has no device memory to take them from.
    if (!gpu::compiled_in()) throw usage_error("device arrays need a CUDA build of discount_app");
    multiply_on_device(request, spec, report);
  } else {
    const Plan plan = make_plan(spec.plan);
    MemoryOutput sink(out, input.shape(), request.axes);
    report.output = sink.describe();
    report.plan = plan.describe();
    // Host memory and arrays the kernel can take as they are: one pass, no staging.
    if (direct_applies(request, plan)) {
      report.output += " (direct: the kernel reads disc and writes out, no staging)";
      whole_array_kernel();
      multiply_direct(request, spec, plan, report, stop, progress);
    } else {
      multiply_pipelined(spec, plan, input, sink, report, stop, progress);
    }
    if (report.interrupted)
      throw Error(ExitCode::interrupted,
                  std::string("multiply interrupted by ") + signal_name(stop ? stop->load() : 0) + " after " +
                      std::to_string(report.slabs_run) + " of " + std::to_string(report.slabs_total) +
                      " slabs; `out` is complete for those slabs only: call multiply again to compute it whole");
  }
  report.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace discount::embed
