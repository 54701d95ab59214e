#include "resolve/resolve.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "common/sizes.hpp"
#include "io/records/part_count.hpp"
#include "io/posix/posix_io.hpp"
#include "kernels/features.hpp"
#include "plan/defaults.hpp"
#include "resolve/layout_choice.hpp"

namespace discount {

InputFacts input_facts(const InputSource& input) {
  InputFacts facts;
  facts.dates = input.shape().dates;
  facts.ids = input.shape().ids;
  facts.nums = input.shape().nums;
  facts.axes = input.axes();
  facts.identity = input.identity();
  facts.file_stat = input.file_stat();
  facts.hdf5_file = input.hdf5_file();
  facts.read_memory_bytes = input.read_memory_bytes();
  facts.stored = input.stored_bytes();
  facts.visits_as_read = input.visits_as_read();
  facts.reads_ranges = input.reads_ranges();
  facts.chunks = input.chunk_grid();
  return facts;
}

std::uint64_t host_share(std::uint64_t available_bytes, int local_ranks) {
  return available_bytes / static_cast<std::uint64_t>(std::max(1, local_ranks));
}

std::uint64_t device_share(std::uint64_t free_bytes, int local_ranks, int visible_devices) {
  const int devices = std::max(1, visible_devices);
  const int sharing = (std::max(1, local_ranks) + devices - 1) / devices;
  return free_bytes / static_cast<std::uint64_t>(sharing);
}

Range select_range(const std::optional<Range>& wanted, std::int64_t extent, const char* key, const char* what) {
  if (!wanted) return {0, extent};
  if (wanted->end > extent)
    throw config_error(std::string(key) + " = [" + std::to_string(wanted->begin) + ", " + std::to_string(wanted->end) +
                       "] exceeds the " + std::to_string(extent) + " " + what + " of the input");
  return *wanted;
}

namespace {

// On a GPU the MDRange's dimensions run reversed (kernels/apply.hpp), so with
// three parallel dims the slowest-varying memory position becomes the CUDA
// block's z, which holds at most kMaxBlockZ threads: a larger tile would make
// every launch fail.
void check_tile(const Config& config, KernelKind kernel, const Slicing& slicing, bool gpu_order) {
  if (kernel != KernelKind::mdrange || !gpu_order || slicing.rank() != 3) return;
  if (slicing.tile[0] > kMaxBlockZ)
    throw config_error(config.source_path + ": compute.tile: " + std::to_string(slicing.tile[0]) +
                       " along the slowest-varying parallel axis becomes the CUDA block's z, which allows at most " +
                       std::to_string(kMaxBlockZ));
}

// compute.kernel: auto takes fused where the data is multiplied in host
// memory (no device copies), the slicing is the default (every axis
// parallel, tiles auto) and the input hands each piece over as it lands
// (positional reads, arrays in memory): the reader's threads multiply each
// piece while it is in cache, which saves the kernel's own pass over the
// slab (a read and a write of every byte). A slicing the user chose, a GPU,
// or an input read through HDF5's own reads or made up (synthetic) takes
// mdrange: there the multiply would be a pass of its own on the reader's
// threads instead of beside them.
// Every axis parallel, tiles auto: no slicing the user chose.
bool default_slicing(const ComputeConfig& c) { return c.tile.empty() && c.parallel_dims.size() == 3; }

KernelKind resolve_kernel(const Config& config, bool device_copies, bool visits_as_read) {
  const ComputeConfig& c = config.compute;
  if (c.kernel == KernelKind::fused) {
    if (device_copies)
      throw config_error(config.source_path +
                         ": compute.kernel: fused multiplies in host memory as each piece is read, but this job "
                         "computes on the GPU; use kernel: auto or mdrange, or compute.space: host");
    if (!default_slicing(c))
      throw config_error(config.source_path +
                         ": compute.kernel: fused has no MDRange to shape; compute.parallel_dims and compute.tile "
                         "need kernel: mdrange");
  }
  if (c.kernel != KernelKind::automatic) return c.kernel;
  return !device_copies && default_slicing(c) && visits_as_read ? KernelKind::fused : KernelKind::mdrange;
}

// memory.staging: none moves each slab in ~1 MiB pieces on one I/O thread
// (read, checks, multiply on the host or a round trip to the GPU, write)
// through buffers that stay in cache, so no slab crosses memory in a staging
// ring. Why this job cannot, or "".
std::string unstaged_refusal(const Config& config, const InputFacts& input, KernelKind kernel, bool device_copies,
                             bool memory_output) {
  if (config.output.mode != OutputMode::file && !memory_output) return "needs an output file (output.mode: file)";
  if (config.memory.chunk_axis == Axis::id)
    return "keeps multBy resident and cuts date slabs, but memory.chunk_axis: id cuts id slabs";
  if (!input.reads_ranges && input.chunks.threads > 0)
    return "decodes a compressed input's chunks piece by piece, which needs chunks one element thick along the "
           "file's first axis and either whole along its last or one element thick along its second; this input's "
           "chunks are not";
  if (!input.reads_ranges)
    return "needs an input read by positional reads (a contiguous float64 dataset) or by parallel chunk reads; "
           "this input is read through HDF5 (a stored type to convert, or filters the app does not decode)";
  if (device_copies && !(default_slicing(config.compute) && config.compute.kernel == KernelKind::automatic))
    return "multiplies each piece on the GPU with a loop of its own: it needs compute.kernel: auto and the default "
           "slicing";
  if (!device_copies && kernel != KernelKind::fused)
    return "needs the multiply on the I/O threads (compute.kernel: auto or fused, the default slicing)";
  return {};
}

// chunk_axis is the resolved one (date or id, never auto): a job that auto
// resolves to date has the identity it had when date was the default, so
// its partials resume.
std::string identity_text(const Config& config, const InputFacts& input, Range dates, Range ids, Axis chunk_axis,
                          OutputLayout layout) {
  const auto& in = config.input;
  const auto range = [](Range r) { return "[" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")"; };
  // One `key: value` line each (io/output/identity.hpp names the lines that differ).
  // The input's content, not its path or time stamp: a copy staged anew for
  // each run resumes; other content does not.
  return "identity: discount_app 2\n"
         "input: " +
         input.identity +
         "\n"
         "input.multiplier: " +
         in.multiplier +
         "\n"
         "input.discount: " +
         in.discount +
         "\n"
         "input.axes: " +
         axis_name(input.axes[0]) + ", " + axis_name(input.axes[1]) + ", " + axis_name(input.axes[2]) +
         "\n"
         "input.dates: " +
         range(dates) +
         "\n"
         "input.ids: " +
         range(ids) +
         "\n"
         "input.nonfinite: " +
         (in.nonfinite == NonFinite::error ? "error" : "propagate") +
         "\n"
         "output.dataset: " +
         config.output.dataset + "\n" + (config.output.dtype == OutputType::float32 ? "output.dtype: float32\n" : "") +
         "memory.chunk_axis: " + axis_name(chunk_axis) + "\n" +
         // Only a split output says so: a single one keeps the identity earlier versions wrote.
         (layout == OutputLayout::split ? "output.layout: split\n" : "");
}
}  // namespace

void choose_chunk_axis(const std::optional<Axis>& configured, const SystemFacts& facts, PlanRequest& request) {
  request.chunk_axis_auto = !configured;
  if (configured) {
    request.chunk_axis = *configured;
    request.chunk_axis_reason = "set by memory.chunk_axis";
    return;
  }
  if (facts.recorded_chunk_axis) {
    request.chunk_axis = *facts.recorded_chunk_axis;
    request.chunk_axis_kept_from = facts.recorded_in.empty() ? std::string("the existing partial") : facts.recorded_in;
    request.chunk_axis_reason = "auto: kept from " + request.chunk_axis_kept_from;
    return;
  }
  request.chunk_axis = Axis::date;
  const std::string shortfall = minimal_slab_shortfall(request);
  if (!shortfall.empty()) {
    request.chunk_axis = Axis::id;
    request.chunk_axis_reason = "auto: " + shortfall;
    return;
  }
  request.chunk_axis_reason = "auto: a one-date slab fits the budgets";
  // Both may fit: weigh how each axis's slabs lie in the file. Date slabs of
  // a transposed [id, date, num] file read one short run per id, id slabs one
  // long run; the plan's own slab sizes decide (plan/defaults.hpp).
  PlanRequest by_id = request;
  by_id.chunk_axis = Axis::id;
  if (request.dates <= 0 || request.ids <= 0 || request.nums <= 0 || !minimal_slab_shortfall(by_id).empty()) return;
  const std::array<std::int64_t, 3> source{facts.input.dates, facts.input.ids, facts.input.nums};
  const SlabReadShape date_reads = slab_read_shape(make_plan(request), facts.input.axes, source);
  const SlabReadShape id_reads = slab_read_shape(make_plan(by_id), facts.input.axes, source);
  if (std::min(id_reads.run_bytes, kEfficientRun) <= std::min(date_reads.run_bytes, kEfficientRun)) return;
  request.chunk_axis = Axis::id;
  const auto axes = facts.input.axes;
  request.chunk_axis_reason = "auto: in this file's [" + std::string(axis_name(axes[0])) + ", " + axis_name(axes[1]) +
                              ", " + axis_name(axes[2]) + "] layout a date slab reads " +
                              std::to_string(date_reads.runs) + " run(s) of " + format_bytes(date_reads.run_bytes) +
                              ", an id slab " + std::to_string(id_reads.runs) + " run(s) of " +
                              format_bytes(id_reads.run_bytes);
}

// An input whose chunks the app decodes: slabs along the chunk grid, and
// (memory.max_slab: auto) large enough to hold eight chunks for every
// decoding thread, so that every core inflates at once and the last round
// of a slab leaves few idle. The budgets still cap them (make_plan).
static void align_to_chunks(const Config& config, const InputFacts& input, PlanRequest& request) {
  const ChunkGrid& grid = input.chunks;
  if (grid.threads == 0) return;
  request.align = request.chunk_axis == Axis::date ? grid.dates : grid.ids;
  // The ring's slabs hold enough chunks to keep every decoding thread busy;
  // memory.staging: none's threads each decode slabs of their own.
  if (!config.memory.max_slab && !request.unstaged)
    request.max_slab = std::max(request.max_slab, std::uint64_t{8} * grid.threads * grid.bytes);
}

void check_config(const Config& config) {
  require_compiled_parts(config);
  if (config.output.mode == OutputMode::checksum && config.verify != VerifyMode::none)
    throw config_error(config.source_path +
                       ": 'verify' needs an output file; it cannot be used with output.mode: checksum");
  if (config.compute.kernel == KernelKind::blas && !config.input.synthetic &&
      !(config.input.axes[0] == Axis::date && config.input.axes[1] == Axis::id))
    throw config_error(config.source_path +
                       ": compute.kernel: blas needs input.axes [date, id, num]; use kernel: mdrange for other orders");
  const int depth = config.memory.pipeline_depth;
  if (depth < 1 || depth > kMaxPipelineDepth)
    throw config_error(config.source_path + ": memory.pipeline_depth = " + std::to_string(depth) +
                       " is out of range [1, " + std::to_string(kMaxPipelineDepth) + "]");
}

namespace {

// What resolve() decides on its way, handed from one step to the next.
struct Choices {
  KernelKind kernel = KernelKind::automatic;
  bool unstaged = false;       // memory.staging: none's threads, no ring
  bool small_on_disk = false;  // an output the page cache takes whole (the ring's fixed costs outweigh it)
  bool memory_pieces = false;  // arrays in memory on a GPU, in pieces through buffers in cache
  LayoutChoice layout;
  int parts = 0, writers = 0;      // split: part files and writer threads
  std::uint64_t direct_piece = 0;  // O_DIRECT bounce buffer per writer thread (0: none)
};

std::uint64_t stored_output_bytes(const Config& config, const PlanRequest& request) {
  return static_cast<std::uint64_t>(request.dates) * request.ids * request.nums * stored_bytes(config.output.dtype);
}

// The request's shape and budgets.
void start_request(const Config& config, const SystemFacts& facts, Range dates, Range ids, PlanRequest& request) {
  request.dates = dates.size();
  request.ids = ids.size();
  request.nums = facts.input.nums;
  request.pipeline_depth = config.memory.pipeline_depth;
  request.device_copies = config.compute.space == Space::device && facts.separate_device_memory;
  request.host_budget = config.memory.host_budget.resolve(facts.host_bytes);
  request.device_budget = request.device_copies ? config.memory.device_budget.resolve(facts.device_bytes) : 0;
}

// memory.staging: none where asked (or refused, saying why); auto takes it
// for a split output on a memory-backed file system (docs/config.md), where
// each thread writes a part file of its own; and on a disk for an output the
// page cache takes whole, in host memory and one process: there the ring's
// fixed costs (its buffers' first touch, the O_DIRECT staging) outweigh the
// streaming. A host_budget under kUnstagedDiskBudget keeps the ring's smaller
// buffers. Arrays in memory on a GPU: their pieces go up and down through
// buffers in cache, so the host copies each byte in and out of memory once
// instead of through a ring in memory (docs/python.md), where both budgets
// hold four times the threads' pieces (budgets cut smaller keep the ring's
// slabs). choose_split() may still take the ring.
void choose_staging(const Config& config, const SystemFacts& facts, const PlanRequest& request, Choices& c) {
  const std::string why =
      unstaged_refusal(config, facts.input, c.kernel, request.device_copies, facts.output_piece_threads > 0);
  if (config.memory.staging == Staging::none && !why.empty())
    throw config_error(config.source_path + ": memory.staging: none " + why + "; use staging: auto or ring");
  const std::uint64_t pieces_floor =
      4 * static_cast<std::uint64_t>(std::max(0, facts.output_piece_threads)) * kCachePieceBytes;
  c.memory_pieces = facts.output_piece_threads > 0 && request.device_copies && request.host_budget >= pieces_floor &&
                    request.device_budget >= pieces_floor;
  c.small_on_disk = config.output.mode == OutputMode::file && !facts.output_memory_backed && !request.device_copies &&
                    facts.ranks <= 1 && stored_output_bytes(config, request) <= kUnstagedDiskBytes &&
                    request.host_budget >= kUnstagedDiskBudget;
  c.unstaged =
      config.memory.staging == Staging::none || (config.memory.staging == Staging::automatic && why.empty() &&
                                                 (facts.output_memory_backed || c.small_on_disk || c.memory_pieces));
}

// output.layout and, for split, the part count (auto: io/records/part_count.hpp) and
// one writer per part; the ring gets two buffers more than the writers, so
// that they write at once while the reader and the kernel go on.
void choose_split(const Config& config, const SystemFacts& facts, PlanRequest& request, Choices& c) {
  LayoutFacts layout_facts;
  layout_facts.output_bytes = stored_output_bytes(config, request);
  layout_facts.cores = 2 * std::max(1u, facts.writer_threads);
  layout_facts.memory_backed = facts.output_memory_backed;
  layout_facts.recorded = facts.recorded_layout;
  layout_facts.recorded_in = facts.recorded_in;
  layout_facts.compressed = config.output.compression.enabled();
  c.layout = choose_layout(config.output.layout, config.output.mode, layout_facts);
  if (layout_facts.compressed && config.output.mode == OutputMode::file && c.layout.layout != OutputLayout::split)
    throw config_error(config.source_path + ": output.compression stores the split layout's finished parts " +
                       "compressed, but this output is single (" + c.layout.reason +
                       "); use output.layout: split (or auto), or --restart an existing single partial");
  c.parts = config.output.parts;
  if (c.layout.layout == OutputLayout::split) {
    if (c.parts <= 0) {
      c.parts = auto_parts(static_cast<std::uint64_t>(request.dates) * request.ids * request.nums * sizeof(double),
                           layout_facts.cores, facts.output_memory_backed);
      // memory.staging: none's threads each write a file of their own; the
      // ring's writers compete with its reader's decoding, so fewer parts.
      if (c.unstaged && facts.output_memory_backed && c.parts > 1)
        c.parts = std::max(c.parts, static_cast<int>(std::min(64u, layout_facts.cores)));
      // Under MPI a multiple of the ranks: on a fresh run each rank's share of the slabs is whole parts of its own.
      if (facts.ranks > 1 && c.parts > 1) c.parts = (c.parts + facts.ranks - 1) / facts.ranks * facts.ranks;
    }
    c.writers = split_writers(c.parts, layout_facts.cores);
    if (c.writers > 1)
      request.pipeline_depth = std::max(request.pipeline_depth, std::min(kMaxPipelineDepth, c.writers + 2));
  }
  // auto on a memory-backed file system: only where several threads write parts of their own at once. A compressed
  // input is decoded by those threads: with one writer (one file), one thread would decode it all, where the ring
  // decodes each slab on every core.
  const bool decodes_chunks = facts.input.chunks.threads > 0;
  if (config.memory.staging == Staging::automatic && c.writers < 2 && (!c.small_on_disk || decodes_chunks) &&
      !c.memory_pieces)
    c.unstaged = false;
}

// Slab sizes, the O_DIRECT bounce buffers and the chunk axis. memory.staging:
// none keeps multBy resident and cuts date slabs: where the chunk axis comes
// out id, the ring takes the job after all.
void size_slabs(const Config& config, const SystemFacts& facts, PlanRequest& request, Choices& c) {
  const int unstaged_threads = facts.output_piece_threads > 0 ? facts.output_piece_threads : std::max(1, c.writers);
  const std::uint64_t job_bytes =
      static_cast<std::uint64_t>(request.dates) * request.ids * request.nums * request.element_bytes;
  const auto auto_slab = [&] {
    return c.unstaged ? auto_max_slab_unstaged(job_bytes, unstaged_threads)
                      : auto_max_slab(job_bytes, request.pipeline_depth);
  };
  request.max_slab = config.memory.max_slab ? config.memory.max_slab->resolve(request.host_budget) : auto_slab();
  // memory.staging: none writes its ~1 MiB pieces through the page cache instead.
  const auto direct_setup = [&] {
    c.direct_piece = 0;
    request.staging_bytes = 0;
    if (config.output.mode != OutputMode::file || !config.output.direct_io || c.unstaged) return;
    c.direct_piece = DirectWriter::piece_for(request.host_budget, facts.writer_threads);
    // Split: each of the writers has its own bounce buffers (io/records/part_set.cpp shares them out among the parts).
    request.staging_bytes = facts.writer_threads * c.direct_piece * std::max(1, c.writers);
  };
  direct_setup();
  request.read_bytes = facts.input.read_memory_bytes;
  request.unstaged = c.unstaged;
  if (c.unstaged) request.piece_bytes = static_cast<std::uint64_t>(unstaged_threads) * kCachePieceBytes;
  choose_chunk_axis(config.memory.chunk_axis, facts, request);
  if (c.unstaged && request.chunk_axis == Axis::id) {
    if (config.memory.staging == Staging::none)
      throw config_error(config.source_path +
                         ": memory.staging: none keeps multBy resident and cuts date slabs, but "
                         "this job cuts id slabs (" +
                         request.chunk_axis_reason + "); use staging: auto or ring");
    c.unstaged = request.unstaged = false;
    request.piece_bytes = 0;
    direct_setup();
    if (!config.memory.max_slab) request.max_slab = auto_slab();
    choose_chunk_axis(config.memory.chunk_axis, facts, request);
  }
  align_to_chunks(config, facts.input, request);
}

PipelineSpec pipeline_spec(const Config& config, const SystemFacts& facts, Range dates, Range ids, const Choices& c,
                           PlanRequest& request) {
  PipelineSpec pipeline;
  pipeline.space = config.compute.space;
  pipeline.kernel = c.kernel;
  pipeline.staging = c.unstaged ? Staging::none : Staging::ring;
  request.kernel_on_read = pipeline.kernel == KernelKind::fused;
  const auto& axes = facts.input.axes;
  if (pipeline.kernel == KernelKind::blas && !(axes[0] == Axis::date && axes[1] == Axis::id))
    throw config_error(config.source_path +
                       ": compute.kernel: blas needs the input's axes [date, id, num] (the file's "
                       "dimension names say otherwise); use kernel: mdrange for other orders");
  pipeline.slicing = make_slicing(axes, config.compute.parallel_dims, config.compute.tile);
  check_tile(config, pipeline.kernel, pipeline.slicing, request.device_copies);
  pipeline.check_finite = config.input.nonfinite == NonFinite::error;
  pipeline.multiplier = config.input.multiplier;
  pipeline.discount = config.input.discount;
  pipeline.dates = dates;
  pipeline.ids = ids;
  pipeline.rank = facts.rank;
  pipeline.ranks = facts.ranks;
  pipeline.knobs = facts.knobs;
  return pipeline;
}

OutputSpec output_spec(const Config& config, const SystemFacts& facts, Range dates, Range ids, const Choices& c,
                       const PlanRequest& request) {
  const InputFacts& input = facts.input;
  OutputSpec output;
  output.path = config.output.file;
  output.input_file = config.input.file;
  output.input_files = config.input.files;
  output.dataset = config.output.dataset;
  output.dtype = config.output.dtype;
  output.compression = config.output.compression;
  output.check_finite = config.input.nonfinite == NonFinite::error;
  output.overwrite = config.output.overwrite;
  output.axes = input.axes;
  output.dates = dates.size();
  output.ids = ids.size();
  output.nums = input.nums;
  output.chunk_axis = request.chunk_axis;
  output.checkpoint_seconds = config.output.checkpoint_seconds;
  output.direct_io = config.output.direct_io && !c.unstaged;
  output.pieces = c.unstaged;
  output.direct_piece = c.direct_piece;
  output.layout = c.layout.layout;
  output.parts = c.parts;
  output.parts_auto = c.layout.layout == OutputLayout::split && config.output.parts <= 0;
  output.parts_per_core = output.parts_auto && c.unstaged && facts.output_memory_backed && c.parts > 1;
  output.writers = c.writers;
  output.mpi_hints = config.output.mpi_hints;
  output.writeback = facts.knobs.writeback;
  output.test_hold = facts.knobs.test_hold;
  output.owner = facts.rank == 0;
  output.rank = facts.rank;
  output.ranks = facts.ranks;
  output.identity = identity_text(config, input, dates, ids, request.chunk_axis, c.layout.layout);
  output.input_stat = input.file_stat;
  output.decor = {config.input.synthetic ? std::string() : config.input.file,
                  config.input.discount,
                  input.axes,
                  dates,
                  ids,
                  input.nums,
                  {},
                  config.source_path,
                  config.input.files.empty() ? std::string() : input.hdf5_file,
                  config.input.multiplier};
  return output;
}

ReportSpec report_spec(const Config& config, const SystemFacts& facts, const Choices& c, const PipelineSpec& pipeline,
                       bool device_copies) {
  ReportSpec report;
  report.kernel = kernel_name(pipeline.kernel);
  report.slicing = pipeline.kernel == KernelKind::blas    ? "KokkosBlas::mult over whole slabs"
                   : c.unstaged && device_copies          ? kUnstagedDeviceSlicing
                   : c.unstaged                           ? kUnstagedSlicing
                   : pipeline.kernel == KernelKind::fused ? kFusedSlicing
                                                          : pipeline.slicing.describe(facts.input.axes);
  report.config_yaml = config.to_yaml();
  report.layout_reason = c.layout.reason;
  report.output_memory_backed = facts.output_memory_backed;
  return report;
}

}  // namespace

JobSpec resolve(const Config& config, const SystemFacts& facts) {
  check_config(config);
  JobSpec spec;
  spec.source_path = config.source_path;
  const Range dates = select_range(config.input.dates, facts.input.dates, "input.dates", "dates");
  const Range ids = select_range(config.input.ids, facts.input.ids, "input.ids", "ids");
  PlanRequest& request = spec.plan;
  start_request(config, facts, dates, ids, request);
  Choices c;
  c.kernel = resolve_kernel(config, request.device_copies, facts.input.visits_as_read);
  choose_staging(config, facts, request, c);
  choose_split(config, facts, request, c);
  size_slabs(config, facts, request, c);
  spec.pipeline = pipeline_spec(config, facts, dates, ids, c, request);
  // The stored sizes come after the chunk axis, whose choice weighs plans made without them.
  request.output_bytes = stored_bytes(config.output.dtype);
  request.input_bytes = facts.input.stored.discount;
  request.mult_input_bytes = facts.input.stored.multiplier;
  spec.output = output_spec(config, facts, dates, ids, c, request);
  spec.output_mode = config.output.mode;
  spec.identity = spec.output.identity;
  spec.limits = config.limits;
  spec.knobs = facts.knobs;
  spec.verify = config.verify;
  spec.report_path = config.report;
  spec.report = report_spec(config, facts, c, spec.pipeline, request.device_copies);
  return spec;
}

}  // namespace discount
