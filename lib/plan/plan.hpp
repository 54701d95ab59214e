// Turns shapes and budgets into slabs and buffer sizes. Pure: no I/O, no
// Kokkos, so every corner is unit-tested in milliseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/axis.hpp"
#include "common/range.hpp"
#include "plan/stages.hpp"
#include "plan/limits.hpp"

namespace discount {

// memory.staging: none with a GPU: pieces each I/O thread has in flight.
// Four ran 20 GB on tmpfs in 1.97-2.19 s on the H200 node, two in
// 1.78-1.81 s (calls of the same day): the buffers stay in cache.
constexpr int kDevicePiecesPerThread = 2;

struct PlanRequest {
  // Extents of the selected region (after input.dates / input.ids).
  std::int64_t dates = 0, ids = 0, nums = 0;
  Axis chunk_axis = Axis::date;
  // memory.chunk_axis: auto chose chunk_axis (resolve/resolve.hpp); the
  // reason is one line for `plan` and the run's header, e.g. "auto: a
  // one-date slab fits the budgets".
  bool chunk_axis_auto = false;
  std::string chunk_axis_reason;
  std::string chunk_axis_kept_from;  // auto kept an earlier run's axis: "the existing partial"; empty: not
  int pipeline_depth = 3;
  bool device_copies = false;  // kernel in a device memory space: H2D and D2H
  // compute.kernel: fused: the reader's threads multiply each piece, so a
  // slab's read and kernel run one after the other, not side by side.
  bool kernel_on_read = false;
  // memory.staging: none: no staging ring; one slab buffer serves a slab
  // across a part's edge, and each I/O thread has a piece buffer (piece_bytes
  // in all, taken from host_budget).
  bool unstaged = false;
  // The multiply runs piece by piece beside the I/O (either of the two above):
  // the report's kernel_on_pieces.
  bool kernel_on_pieces() const { return kernel_on_read || unstaged; }
  std::uint64_t piece_bytes = 0;  // host; on a GPU kDevicePiecesPerThread times that too
  std::uint64_t host_budget = 0;
  std::uint64_t device_budget = 0;
  std::uint64_t max_slab = std::uint64_t{256} << 20;
  // Slabs hold a multiple of this along the chunk axis when they hold more
  // than it (the input's chunk extent there, when its chunks are decoded by
  // the app: a chunk the slabs cut would be read for two slabs). 0: any.
  std::int64_t align = 0;
  // Fixed host memory beside the slab buffers: the O_DIRECT writer's staging
  // buffers (io/posix/posix_io.hpp). Taken from host_budget.
  std::uint64_t staging_bytes = 0;
  // Fixed host memory for reading the input through HDF5: chunk caches, a
  // decompressed chunk, the type conversion buffer, the per-chunk bookkeeping
  // of one read (io/input/input.hpp's read_memory_bytes). Taken from host_budget.
  std::uint64_t read_bytes = 0;
  std::uint64_t element_bytes = sizeof(double);
  // Bytes per element as stored on disk, which the read and write stages
  // count: the inputs' (discount, multBy) and the output's (output.dtype).
  std::uint64_t input_bytes = sizeof(double), mult_input_bytes = sizeof(double), output_bytes = sizeof(double);
};

// Ranges are relative to the selected region.
struct Slab {
  int index = 0;
  Range dates;
  Range ids;
  std::int64_t nums = 0;
  std::int64_t elements() const { return dates.size() * ids.size() * nums; }
};

struct Plan {
  PlanRequest request;
  std::vector<Slab> slabs;
  std::int64_t slab_extent = 0;  // along the chunk axis, all but the last slab
  std::uint64_t slab_bytes = 0;  // discount bytes of the largest slab
  std::uint64_t mult_bytes = 0;  // multBy bytes of the whole selection
  // The same as stored in the input file (what reading it moves).
  std::uint64_t mult_read_bytes() const { return mult_bytes / request.element_bytes * request.mult_input_bytes; }
  bool mult_per_slab = false;         // chunk_axis id: each slab brings its own multBy rows
  std::uint64_t slab_mult_bytes = 0;  // multBy bytes travelling with each slab (id chunks)
  int host_buffers = 0;               // ring of pinned staging buffers
  int device_buffers = 0;             // 0 when the kernel runs in host space
  std::uint64_t host_bytes = 0;       // everything the plan allocates on the host
  std::uint64_t device_bytes = 0;     // everything the plan allocates on the device

  std::uint64_t total_elements() const;
  std::uint64_t input_bytes() const;   // discount + multBy, read once
  std::uint64_t output_bytes() const;  // cv
  std::string describe() const;        // human-readable, for `discount_app plan`
};

// Throws discount::Error (ExitCode::config) when one minimal slab does not fit
// a budget, and (ExitCode::data_invalid) for an empty dimension.
// request.pipeline_depth is at least 1 (resolve() checks it).
Plan make_plan(const PlanRequest& request);
// Why one minimal slab along request.chunk_axis does not fit a budget, e.g.
// "one date needs 3 buffer(s) x 1.90 GiB for one date = 5.70 GiB, over
// memory.host_budget 4.00 GiB"; empty when it fits. The same sizes as
// make_plan, which refuses exactly these cases.
std::string minimal_slab_shortfall(const PlanRequest& request);

// What `slab` moves through the stages (plan/stages.hpp): the pipeline counts
// these bytes and predict() adds them up, so the two cannot differ.
SlabTraffic traffic(const Plan& plan, const Slab& slab);

// What this process may use, measured once (0: unknown): the host's
// available memory (MemAvailable, capped by a cgroup limit) and the GPU's free
// memory, each already divided among the ranks that share it.
struct MachineMemory {
  std::uint64_t host_available = 0;
  std::uint64_t device_free = 0;
};
// A budget held against the machine, before any I/O. A plan that allocates
// more than is available is refused (ExitCode::config): it would swap or be
// killed mid-run. A budget above what is available whose plan fits (a small
// job) is allowed; the returned line warns about it. Empty when all is well.
std::string check_machine_memory(const Plan& plan, const MachineMemory& machine);

// One stage's share of the whole job: its bytes as stage_bytes() counts them,
// and the time its link's limit allows.
struct StagePrediction {
  std::string stage;  // stage_name(): no h2d/d2h in host space
  std::uint64_t bytes = 0;
  double seconds = -1;  // bytes / limit; < 0: the limit is unknown
  double gb_per_s = 0;  // the limit used; 0: unknown
  std::string source;   // the limit's source (LinkLimit::source); "" when unknown
};

// The stages in pipeline order, with their bytes for a fresh run of every
// slab (stage_bytes() per slab plus resident_stage_bytes()).
std::vector<StagePrediction> predict(const Plan& plan, const Limits& limits);
// The same for the slabs one process will run (a resume's pending slabs, an
// MPI rank's share), by index into plan.slabs. The resident multBy (date
// slabs) is read by every process, whatever its share.
std::vector<StagePrediction> predict(const Plan& plan, const Limits& limits, const std::vector<int>& slabs);
// The stages overlap (pipeline_depth >= 2): the slowest known stage sets the
// wall time. < 0 when no stage's limit is known.
double predicted_wall_seconds(const std::vector<StagePrediction>& stages);
// One stage after another (pipeline_depth 1, or an upper bound): the sum of
// the known stages. < 0 when no stage's limit is known.
double predicted_serial_seconds(const std::vector<StagePrediction>& stages);

// Time a run spends in no stage: opening the input, starting Kokkos,
// measuring the links, creating, flushing and publishing the output, and the
// first touch of the slab buffers. The pipeline's report shows it as wall time
// less the time any stage was busy (lib/pipeline/pipeline.cpp).
struct FixedCost {
  double seconds = -1;  // < 0: unknown
  std::string source;   // where the figure came from, for people
};

// The run's wall time from the stages' rates, as lib/pipeline/pipeline.cpp
// runs them: the resident multBy is read before the first slab; the first
// slab goes through every stage one after another (the fill, and at the end
// the drain); every further slab adds one period, the slowest stage's time
// per slab or, when the ring of staging buffers is too short for every stage
// to hold a slab at once, the buffers' round trip over their count. Under
// memory.staging: none every slab takes one period, the I/O threads' stages
// added up (plan.cpp says why).
struct WallPrediction {
  double seconds = -1;       // the whole run; < 0: a stage's rate is unknown
  double fixed_seconds = 0;  // FixedCost, 0 when unknown
  bool fixed_known = false;
  double resident_seconds = 0;    // the resident multBy's read
  double first_slab_seconds = 0;  // one average slab through every stage
  double period_seconds = 0;      // each further slab
  int slabs = 0;
  std::string pace;                  // the stage that sets the period, or "buffers"
  std::vector<std::string> unknown;  // stages without a rate
};
WallPrediction predict_wall(const Plan& plan, const std::vector<StagePrediction>& stages, const FixedCost& fixed);
// WallPrediction::pace when the reader's threads read and multiply (kernel:
// fused) and that sum is the slowest.
inline constexpr const char* kFusedPace = "read + fused kernel";
// ... and under memory.staging: none, where each I/O thread's stages add up:
// in host memory, and on a GPU (the copies and the kernel beside them).
inline constexpr const char* kUnstagedPace = "read + kernel + write";
inline constexpr const char* kUnstagedDevicePace = "read + write";
// The same for `slabs` of plan's slabs (a resume's pending share); the
// stages' bytes must be those of predict(plan, limits, slabs).
WallPrediction predict_wall(const Plan& plan, const std::vector<StagePrediction>& stages, const FixedCost& fixed,
                            int slabs);

// Slab-shaped pieces of the job in the order the run reads and writes them,
// for measuring the read and write rates in a moment: each is a part of one
// of plan.slabs (from slab 0 on) of at most `piece_bytes` of discount (but at
// least one row of nums), cut along the chunk axis and, when one step along
// it is larger than a piece, across it too. They stop once `max_bytes` are
// covered or the job ends. Ranges are relative to the selection.
std::vector<Slab> probe_pieces(const Plan& plan, std::uint64_t piece_bytes, std::uint64_t max_bytes);

// A text block for `discount_app plan`: one row per stage (bytes, rate,
// seconds, where the rate came from), then the predicted wall time and how
// it adds up, or one line saying plainly that it cannot be predicted and what
// would let it be.
std::string describe_prediction(const Plan& plan, const std::vector<StagePrediction>& stages,
                                const WallPrediction& wall);
inline std::string describe_prediction(const Plan& plan, const Limits& limits) {
  const auto stages = predict(plan, limits);
  return describe_prediction(plan, stages, predict_wall(plan, stages, FixedCost{}));
}

}  // namespace discount
