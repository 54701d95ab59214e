// From a parsed Config and the facts of this machine and input to everything
// the job needs: every cross-field rule (with its error), the plan request,
// the slicing, the output's layout, what the report shows and the text the
// resume fingerprint is made of. Pure: no Kokkos, no HDF5, no I/O, so each
// rule is unit-tested in milliseconds (tests/unit/resolve/test_resolve.cpp).
//
// The YAML parser (config.cpp) keeps the rules a single key or section can
// check and point at by file:line:col; the rules that need two sections, the
// input's shape or the machine live here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/knobs.hpp"
#include "config/config.hpp"
#include "io/input/input.hpp"
#include "io/records/output_spec.hpp"
#include "kernels/slicing.hpp"
#include "plan/plan.hpp"

namespace discount {

// The input's shape and identity, read once from the opened source.
struct InputFacts {
  std::int64_t dates = 0, ids = 0, nums = 0;                  // full extents in the source
  std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};  // the file's axis order
  std::string identity;                                       // InputSource::identity(): changes when the inputs change
  std::string file_stat;                // InputSource::file_stat(): which file, and when it last changed
  std::string hdf5_file;                // InputSource::hdf5_file(): the output's coordinates come from there
  std::uint64_t read_memory_bytes = 0;  // InputSource::read_memory_bytes(): HDF5's reading memory
  StoredBytes stored;                   // InputSource::stored_bytes(): element sizes on disk
  bool visits_as_read = false;          // InputSource::visits_as_read(): pieces handed over in cache
  bool reads_ranges = false;            // InputSource::reads_ranges(): memory.staging: none can read it
  ChunkGrid chunks;                     // InputSource::chunk_grid(): chunks decoded on the app's threads
};
InputFacts input_facts(const InputSource& input);

// memory.staging: auto takes none on a disk for outputs up to this size (in
// host memory, one process). On the development VM's disk, each until
// durable, with the page-cache writes' early write-out: 2 GB took 1.03 s that
// way against 2.2-3.3 s through the ring (cp + sync 1.32 s); 4 GB 5.0 s
// against 4.5-5.5 s; 6 GB 8.0 s against 4.9-5.6 s, where the page cache's
// own costs win over the ring's.
constexpr std::uint64_t kUnstagedDiskBytes = std::uint64_t{2} << 30;
// ... given a host_budget of at least this (a smaller one keeps the ring,
// whose buffers shrink with it).
constexpr std::uint64_t kUnstagedDiskBudget = std::uint64_t{256} << 20;

// What this machine offers, gathered once by the caller. Under MPI the caller
// makes them the same on every rank (smallest memory, most writer threads),
// so every rank resolves the same job.
struct SystemFacts {
  InputFacts input;
  // The default execution space's memory is not host memory (a GPU build):
  // compute.space: device then needs device buffers and copies.
  bool separate_device_memory = false;
  std::uint64_t host_bytes = 0;    // host memory this rank may take (its share of what is free)
  std::uint64_t device_bytes = 0;  // GPU memory this rank may take (its share of its GPU's free memory)
  unsigned writer_threads = 2;     // O_DIRECT writer threads (io/posix/posix_io.hpp)
  int rank = 0, ranks = 1;         // under MPI: this process and how many share the job
  // The chunk axis an earlier run of this output recorded (empty: none) and
  // where ("the existing partial"; io/output/output.hpp's recorded_chunk_axis).
  // memory.chunk_axis: auto keeps it, so a resume never changes the output's
  // layout because the budgets changed.
  std::optional<Axis> recorded_chunk_axis;
  std::string recorded_in;
  // output.layout: auto: whether the output's folder is memory-backed, and
  // the layout an earlier run of this output used, found where recorded_in
  // says (resolve/layout_choice.hpp).
  bool output_memory_backed = false;
  std::optional<OutputLayout> recorded_layout;
  // The output is an array in memory whose pieces any thread may write
  // (OutputSink::piece_threads(), the Python module's multiply): this many
  // threads; 0 for a file. On a GPU memory.staging: auto then takes none.
  int output_piece_threads = 0;
  // The DISCOUNT_* environment variables, read once with these facts
  // (common/knobs.hpp); each rank its own. Not part of the job's identity.
  Knobs knobs;
};

// memory.chunk_axis: auto takes date when one minimal date slab fits the
// budgets (plan/plan.hpp's minimal_slab_shortfall, the plan's own sizes),
// else id; an axis an earlier run recorded wins. Sets request.chunk_axis,
// chunk_axis_auto and chunk_axis_reason; the request's other fields must be
// filled in.
void choose_chunk_axis(const std::optional<Axis>& configured, const SystemFacts& facts, PlanRequest& request);

// This rank's share of the node's free host memory: the node's ranks split it.
std::uint64_t host_share(std::uint64_t available_bytes, int local_ranks);
// This rank's share of its GPU's free memory: the node's ranks are spread over
// its visible GPUs, and those on one GPU split it.
std::uint64_t device_share(std::uint64_t free_bytes, int local_ranks, int visible_devices);

// What the pipeline needs besides the plan.
struct PipelineSpec {
  Space space = Space::device;
  KernelKind kernel = KernelKind::mdrange;
  Staging staging = Staging::ring;                           // resolved: ring or none (memory.staging)
  Slicing slicing;                                           // by memory position of the file's axis order
  bool check_finite = true;                                  // input.nonfinite: error
  std::string multiplier = "multBy", discount = "discount";  // dataset names, for messages
  Range dates, ids;                                          // the selection, absolute in the source
  int rank = 0, ranks = 1;                                   // this process takes share `rank` of `ranks` (rank_share)
  Knobs knobs;  // the test hold, the staging ring's pinning, a GPU's piece size (common/knobs.hpp)
};

// The report's slicing text for compute.kernel: fused.
inline constexpr const char* kFusedSlicing =
    "fused: each piece multiplied by the I/O thread that read it, while in cache";

// ... and for memory.staging: none.
inline constexpr const char* kUnstagedSlicing =
    "fused, no staging ring (memory.staging: none): each I/O thread reads, multiplies and writes ~1 MiB "
    "pieces of its own slab while in cache";
inline constexpr const char* kUnstagedDeviceSlicing =
    "no staging ring (memory.staging: none): each I/O thread reads ~1 MiB pieces of its own slab, multiplies each "
    "on the GPU (up, a range loop, down, on a stream of its own) and writes it, while in cache";

// What the run report shows about the job.
struct ReportSpec {
  std::string kernel;                 // kernel_name(): "mdrange" | "blas" | "fused"
  std::string slicing;                // Slicing::describe, or the blas kernel's line
  std::string config_yaml;            // the effective configuration
  std::string layout_reason;          // why the output has its layout (resolve/layout_choice.hpp); empty: no file
  bool output_memory_backed = false;  // the output's folder is on tmpfs/ramfs
};

struct JobSpec {
  std::string source_path;  // the YAML file, for messages
  PlanRequest plan;
  PipelineSpec pipeline;
  // The output's layout and protocol settings. The caller adds what only it
  // knows: restart (a command-line flag), fingerprint, provenance, attach.
  OutputSpec output;
  OutputMode output_mode = OutputMode::file;
  // What identifies the job's result (fingerprint_of(identity)): the inputs,
  // the selection and the result's layout; not budgets, slicing or the rank
  // count, so a resumed job may change those.
  std::string identity;
  LimitsConfig limits;
  VerifyMode verify = VerifyMode::none;
  std::string report_path;  // `report:`; empty: none
  ReportSpec report;
  Knobs knobs;  // SystemFacts::knobs, for the commands (the limits cache's folder)
};

// The rules that need no facts (compute.kernel with input.axes,
// memory.pipeline_depth's bound for a Config built in code). The caller runs
// them before opening the input, so such a mistake costs no I/O; resolve()
// runs them again. Throws discount::Error (ExitCode::config).
void check_config(const Config& config);

// The configured sub-range of an axis (input.dates / input.ids), or the
// whole extent; a range past the input's end is a config_error. Shared by
// run and verify.
Range select_range(const std::optional<Range>& wanted, std::int64_t extent, const char* key, const char* what);

// Throws discount::Error (ExitCode::config) for a rule the job breaks.
JobSpec resolve(const Config& config, const SystemFacts& facts);

}  // namespace discount
