// resolve(): every cross-field rule and what each part of the job gets,
// from a Config and made-up facts. Links the pure parts only (no Kokkos, no HDF5).
#include <gtest/gtest.h>

#include "common/host_parallel.hpp"

#include <string>

#include "common/error.hpp"
#include "config/config.hpp"
#include "io/identity.hpp"
#include "io/posix_io.hpp"
#include "kernels/features.hpp"
#include "plan/defaults.hpp"
#include "plan/plan.hpp"
#include "resolve/layout_choice.hpp"
#include "resolve/resolve.hpp"

using namespace discount;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

Config base_config() {
  Config c;
  c.source_path = "job.yaml";
  c.input.file = "in.h5";
  c.output.file = "out.h5";
  return c;
}

SystemFacts facts(std::int64_t dates = 101, std::int64_t ids = 4003, std::int64_t nums = 5) {
  SystemFacts f;
  f.input.dates = dates;
  f.input.ids = ids;
  f.input.nums = nums;
  f.input.identity = "hdf5:in.h5:1:2";
  f.host_bytes = 64 * kGiB;
  f.device_bytes = 16 * kGiB;
  f.writer_threads = 3;
  return f;
}

// The config error resolve() throws, or "" when it throws none.
std::string config_error_of(const Config& config, const SystemFacts& f) {
  try {
    resolve(config, f);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Resolve, BudgetsFromTheFactsAndDefaults) {
  Config c = base_config();
  SystemFacts f = facts();
  f.separate_device_memory = true;
  const JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.plan.dates, 101);
  EXPECT_EQ(spec.plan.ids, 4003);
  EXPECT_EQ(spec.plan.nums, 5);
  EXPECT_TRUE(spec.plan.device_copies);
  EXPECT_EQ(spec.plan.host_budget, 16 * kGiB);                         // 25% of 64 GiB
  EXPECT_EQ(spec.plan.device_budget, std::uint64_t(0.8 * 16 * kGiB));  // 80% of 16 GiB
  // max_slab: auto: 101 x 4003 x 5 float64 is 16.2 MB, a sixteenth of it
  // under the 16 MiB floor.
  EXPECT_EQ(spec.plan.max_slab, kAutoSlabMin);
  EXPECT_EQ(spec.plan.pipeline_depth, 3);

  c.compute.space = Space::host;  // no copies: no device budget
  const JobSpec host = resolve(c, f);
  EXPECT_FALSE(host.plan.device_copies);
  EXPECT_EQ(host.plan.device_budget, 0u);
  c.compute.space = Space::device;
  f.separate_device_memory = false;  // an OpenMP build: the device is the host
  EXPECT_FALSE(resolve(c, f).plan.device_copies);

  c.memory.max_slab = parse_memory_size("10%");
  c.memory.host_budget = parse_memory_size("2GiB");
  const JobSpec fixed = resolve(c, f);
  EXPECT_EQ(fixed.plan.host_budget, 2 * kGiB);
  EXPECT_EQ(fixed.plan.max_slab, std::uint64_t(0.1 * 2 * kGiB));
}

TEST(Resolve, MemorySharesSplitTheNodeAndEachGpu) {
  EXPECT_EQ(host_share(1000, 1), 1000u);
  EXPECT_EQ(host_share(1000, 4), 250u);
  EXPECT_EQ(host_share(1000, 0), 1000u);
  EXPECT_EQ(device_share(800, 4, 4), 800u);  // one rank per GPU
  EXPECT_EQ(device_share(800, 4, 2), 400u);  // two ranks per GPU
  EXPECT_EQ(device_share(800, 3, 2), 400u);  // rounded up: the busier GPU counts
  EXPECT_EQ(device_share(800, 2, 0), 400u);  // no GPU seen: as one
}

TEST(Resolve, OdirectStagingComesFromTheHostBudgetForFilesOnly) {
  Config c = base_config();
  c.memory.host_budget = parse_memory_size("1GiB");
  const SystemFacts f = facts();
  const std::uint64_t piece = DirectWriter::piece_for(kGiB, 3);
  const JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.plan.staging_bytes, 3 * piece);
  EXPECT_EQ(spec.output.direct_piece, piece);
  c.output.direct_io = false;
  EXPECT_EQ(resolve(c, f).plan.staging_bytes, 0u);
  EXPECT_EQ(resolve(c, f).output.direct_piece, 0u);
  c.output.direct_io = true;
  c.output.mode = OutputMode::checksum;
  EXPECT_EQ(resolve(c, f).plan.staging_bytes, 0u);
  EXPECT_EQ(resolve(c, f).output_mode, OutputMode::checksum);
}

TEST(Resolve, SelectionWithinTheInput) {
  Config c = base_config();
  c.input.dates = Range{10, 101};
  c.input.ids = Range{3, 7};
  const JobSpec spec = resolve(c, facts());
  EXPECT_EQ(spec.plan.dates, 91);
  EXPECT_EQ(spec.plan.ids, 4);
  EXPECT_EQ(spec.pipeline.dates.begin, 10);
  EXPECT_EQ(spec.pipeline.ids.end, 7);
  EXPECT_EQ(spec.output.dates, 91);
  EXPECT_EQ(spec.output.ids, 4);
  c.input.dates = Range{10, 102};
  EXPECT_EQ(config_error_of(c, facts()), "input.dates = [10, 102] exceeds the 101 dates of the input");
  c.input.dates.reset();
  c.input.ids = Range{0, 4004};
  EXPECT_EQ(config_error_of(c, facts()), "input.ids = [0, 4004] exceeds the 4003 ids of the input");
}

TEST(Resolve, BlasNeedsDateThenIdUnlessSynthetic) {
  if (!have_kokkos_kernels) GTEST_SKIP() << "built without Kokkos Kernels: blas is refused whatever the axes";
  Config c = base_config();
  c.compute.kernel = KernelKind::blas;
  EXPECT_EQ(config_error_of(c, facts()), "");
  c.input.axes = {Axis::id, Axis::date, Axis::num};
  EXPECT_NE(config_error_of(c, facts()).find("job.yaml: compute.kernel: blas needs input.axes [date, id, num]"),
            std::string::npos);
  EXPECT_THROW(check_config(c), Error);             // found before any input is opened
  c.input.synthetic = SyntheticSource{2, 3, 4, 1};  // the synthetic source is always date, id, num
  EXPECT_EQ(config_error_of(c, facts()), "");
}

TEST(Resolve, PipelineDepthWithinItsBound) {
  Config c = base_config();
  for (int depth : {0, -1, kMaxPipelineDepth + 1}) {
    c.memory.pipeline_depth = depth;
    EXPECT_EQ(config_error_of(c, facts()),
              "job.yaml: memory.pipeline_depth = " + std::to_string(depth) + " is out of range [1, 64]");
  }
  for (int depth : {1, kMaxPipelineDepth}) {
    c.memory.pipeline_depth = depth;
    const JobSpec spec = resolve(c, facts());
    EXPECT_EQ(spec.plan.pipeline_depth, depth);
    EXPECT_EQ(make_plan(spec.plan).host_buffers, depth);
  }
}

// A tile found too large on a GPU used to fail at the first launch, after
// the output existed; resolve() finds it first.
TEST(Resolve, GpuTileAlongTheSlowestParallelAxisFitsABlocksZ) {
  Config c = base_config();
  c.compute.tile = {65, 4, 1};  // date is memory position 0 in [date, id, num]
  SystemFacts gpu = facts();
  gpu.separate_device_memory = true;
  EXPECT_NE(config_error_of(c, gpu).find("compute.tile: 65 along the slowest-varying parallel axis"),
            std::string::npos);
  c.compute.tile = {64, 4, 1};
  EXPECT_EQ(config_error_of(c, gpu), "");
  c.compute.tile = {1, 4, 65};  // id first in the file: the date tile is not the block's z
  c.input.axes = {Axis::id, Axis::num, Axis::date};
  gpu.input.axes = c.input.axes;  // the file's order, as the opened input reports it
  EXPECT_EQ(config_error_of(c, gpu), "");
  c.compute.tile = {1, 65, 4};  // ... the id tile is
  EXPECT_NE(config_error_of(c, gpu).find("compute.tile: 65"), std::string::npos);
  c.compute.space = Space::host;  // host order: no such limit
  EXPECT_EQ(config_error_of(c, gpu), "");
  c.compute.space = Space::device;
  EXPECT_EQ(config_error_of(c, facts()), "");        // an OpenMP build's device is the host
  c.compute.parallel_dims = {Axis::id, Axis::date};  // two parallel dims: no z
  c.compute.tile = {100, 4};
  EXPECT_EQ(config_error_of(c, gpu), "");
}

TEST(Resolve, PipelineOutputAndReportGetTheirParts) {
  Config c = base_config();
  c.input.axes = {Axis::id, Axis::date, Axis::num};
  c.input.multiplier = "m";
  c.input.discount = "d";
  c.input.nonfinite = NonFinite::propagate;
  c.compute.parallel_dims = {Axis::date, Axis::num};
  c.compute.tile = {8, 5};
  c.output.dataset = "result";
  c.output.overwrite = true;
  c.output.checkpoint_seconds = 2.5;
  c.memory.chunk_axis = Axis::id;
  c.verify = VerifyMode::sample;
  c.report = "run.json";
  SystemFacts f = facts();
  f.input.axes = c.input.axes;
  f.rank = 2;
  f.ranks = 3;
  const JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.pipeline.space, Space::device);
  EXPECT_EQ(spec.pipeline.kernel, KernelKind::mdrange);
  EXPECT_EQ(spec.pipeline.slicing.parallel, (std::array<bool, 3>{false, true, true}));
  EXPECT_EQ(spec.pipeline.slicing.tile, (std::array<std::int64_t, 3>{0, 8, 5}));
  EXPECT_FALSE(spec.pipeline.check_finite);
  EXPECT_EQ(spec.pipeline.multiplier, "m");
  EXPECT_EQ(spec.pipeline.discount, "d");
  EXPECT_EQ(spec.pipeline.rank, 2);
  EXPECT_EQ(spec.pipeline.ranks, 3);
  EXPECT_EQ(spec.output.path, "out.h5");
  EXPECT_EQ(spec.output.input_file, "in.h5");
  EXPECT_EQ(spec.output.dataset, "result");
  EXPECT_TRUE(spec.output.overwrite);
  EXPECT_EQ(spec.output.axes, c.input.axes);
  EXPECT_EQ(spec.output.chunk_axis, Axis::id);
  EXPECT_EQ(spec.output.checkpoint_seconds, 2.5);
  EXPECT_EQ(spec.plan.chunk_axis, Axis::id);
  EXPECT_EQ(spec.verify, VerifyMode::sample);
  EXPECT_EQ(spec.report_path, "run.json");
  EXPECT_EQ(spec.report.kernel, "mdrange");
  EXPECT_EQ(spec.report.slicing, "parallel over date/8 num/5, serial loop over id");
  EXPECT_EQ(spec.report.config_yaml, c.to_yaml());
  if (!have_kokkos_kernels) return;  // blas is refused in this build (Features.BlasNeedsKokkosKernels)
  c.compute.kernel = KernelKind::blas;
  c.input.axes = {Axis::date, Axis::id, Axis::num};
  f.input.axes = c.input.axes;
  EXPECT_EQ(resolve(c, f).report.slicing, "KokkosBlas::mult over whole slabs");
  EXPECT_EQ(resolve(c, f).report.kernel, "blas");
}

// compute.kernel: auto takes fused where the data is multiplied in host
// memory with the default slicing from an input that hands its pieces over
// as they land, else mdrange; fused asked for where it cannot run is a
// config error naming the fix.
TEST(Resolve, KernelAutoTakesFusedInHostMemoryWithTheDefaultSlicing) {
  Config c = base_config();
  SystemFacts gpu = facts();
  gpu.separate_device_memory = true;
  gpu.input.visits_as_read = true;  // positional reads
  SystemFacts cpu = gpu;
  cpu.separate_device_memory = false;  // an OpenMP build: the device is the host
  EXPECT_EQ(resolve(c, gpu).pipeline.kernel, KernelKind::mdrange);
  EXPECT_EQ(resolve(c, gpu).report.kernel, "mdrange");
  EXPECT_EQ(resolve(c, cpu).pipeline.kernel, KernelKind::fused);
  EXPECT_EQ(resolve(c, cpu).report.kernel, "fused");
  EXPECT_EQ(resolve(c, cpu).report.slicing, kFusedSlicing);
  c.compute.space = Space::host;
  EXPECT_EQ(resolve(c, gpu).pipeline.kernel, KernelKind::fused);
  // Pieces visited only after the whole read (HDF5's own reads, synthetic):
  // the multiply would be a pass of its own on the reader's threads.
  SystemFacts later = cpu;
  later.input.visits_as_read = false;
  EXPECT_EQ(resolve(c, later).pipeline.kernel, KernelKind::mdrange);
  // A slicing the user chose is an MDRange's.
  Config sliced = c;
  sliced.compute.parallel_dims = {Axis::id, Axis::num};
  EXPECT_EQ(resolve(sliced, gpu).pipeline.kernel, KernelKind::mdrange);
  Config tiled = c;
  tiled.compute.tile = {1, 64, 5};
  EXPECT_EQ(resolve(tiled, gpu).pipeline.kernel, KernelKind::mdrange);
  // mdrange asked for stays mdrange in host memory.
  Config md = c;
  md.compute.kernel = KernelKind::mdrange;
  EXPECT_EQ(resolve(md, gpu).pipeline.kernel, KernelKind::mdrange);
  // fused asked for: where the compute is on the GPU, or with a slicing, refused.
  Config fused = c;
  fused.compute.kernel = KernelKind::fused;
  EXPECT_EQ(resolve(fused, gpu).pipeline.kernel, KernelKind::fused);
  fused.compute.space = Space::device;
  EXPECT_NE(config_error_of(fused, gpu).find("compute.kernel: fused multiplies in host memory"), std::string::npos)
      << config_error_of(fused, gpu);
  EXPECT_EQ(resolve(fused, cpu).pipeline.kernel, KernelKind::fused);
  sliced.compute.kernel = KernelKind::fused;
  EXPECT_NE(config_error_of(sliced, gpu).find("need kernel: mdrange"), std::string::npos)
      << config_error_of(sliced, gpu);
}

// The fingerprint's text follows what the result is, not how it is computed.
TEST(Resolve, IdentityFollowsTheResultNotTheResources) {
  const Config c = base_config();
  const std::string base = resolve(c, facts()).identity;
  auto differs = [&](auto change) {
    Config changed = c;
    SystemFacts f = facts();
    change(changed, f);
    return resolve(changed, f).identity != base;
  };
  EXPECT_TRUE(differs([](Config&, SystemFacts& f) { f.input.identity = "hdf5:in.h5:9:9"; }));
  EXPECT_TRUE(differs([](Config& x, SystemFacts&) { x.input.dates = Range{1, 101}; }));
  EXPECT_TRUE(differs([](Config& x, SystemFacts&) { x.input.ids = Range{0, 4000}; }));
  EXPECT_TRUE(differs([](Config& x, SystemFacts&) { x.output.dataset = "other"; }));
  EXPECT_TRUE(differs([](Config& x, SystemFacts&) { x.memory.chunk_axis = Axis::id; }));
  EXPECT_TRUE(differs([](Config& x, SystemFacts&) { x.input.nonfinite = NonFinite::propagate; }));
  EXPECT_TRUE(differs([](Config& x, SystemFacts&) { x.input.multiplier = "m2"; }));
  EXPECT_FALSE(differs([](Config& x, SystemFacts&) { x.memory.host_budget = parse_memory_size("1GiB"); }));
  EXPECT_FALSE(differs([](Config& x, SystemFacts&) { x.compute.parallel_dims = {Axis::id}; }));
  EXPECT_FALSE(differs([](Config& x, SystemFacts&) { x.memory.pipeline_depth = 5; }));
  EXPECT_FALSE(differs([](Config&, SystemFacts& f) {
    f.ranks = 4;
    f.host_bytes /= 4;
  }));
}

// A budget too small for one slab is still the plan's error (exit 78),
// found from the resolved request before any I/O.
TEST(Resolve, TheRequestGoesStraightToThePlan) {
  Config c = base_config();
  c.memory.chunk_axis = Axis::date;  // auto would take id here (ChunkAxisAuto*)
  c.memory.host_budget = parse_memory_size("512KiB");
  c.output.direct_io = false;
  const JobSpec spec = resolve(c, facts());
  try {
    make_plan(spec.plan);
    FAIL() << "512 KiB cannot hold one date of 4003 x 5 in three buffers plus multBy";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    EXPECT_NE(std::string(e.what()).find("memory.host_budget = 512 KiB is too small"), std::string::npos);
  }
  c.memory.host_budget = parse_memory_size("64MiB");
  const Plan plan = make_plan(resolve(c, facts()).plan);
  EXPECT_EQ(plan.total_elements(), 101u * 4003 * 5);
  EXPECT_EQ(plan.host_buffers, 3);
}

// memory.chunk_axis: auto takes date while one date's slab (three buffers
// and the resident multBy) fits the budgets; one date of 4003 x 5 float64 is
// 156.37 KiB, so 625.47 KiB with multBy.
TEST(Resolve, ChunkAxisAutoTakesDateWhenOneDateFits) {
  Config c = base_config();
  c.output.direct_io = false;  // no O_DIRECT staging in the sums
  c.memory.host_budget = parse_memory_size("640KiB");
  const JobSpec spec = resolve(c, facts());
  EXPECT_EQ(spec.plan.chunk_axis, Axis::date);
  EXPECT_EQ(spec.output.chunk_axis, Axis::date);
  EXPECT_TRUE(spec.plan.chunk_axis_auto);
  EXPECT_EQ(spec.plan.chunk_axis_reason, "auto: a one-date slab fits the budgets");
  const Plan plan = make_plan(spec.plan);
  EXPECT_EQ(plan.slab_extent, 1);  // exactly one date fits
  EXPECT_NE(plan.describe().find("chunk axis     date, 1 per slab, 101 slab(s)\n"
                                 "               (auto: a one-date slab fits the budgets)\n"),
            std::string::npos)
      << plan.describe();
}

TEST(Resolve, ChunkAxisAutoTakesIdWhenOneDateDoesNotFit) {
  Config c = base_config();
  c.output.direct_io = false;
  c.memory.host_budget = parse_memory_size("512KiB");
  const JobSpec spec = resolve(c, facts());
  EXPECT_EQ(spec.plan.chunk_axis, Axis::id);
  EXPECT_EQ(spec.output.chunk_axis, Axis::id);
  const std::uint64_t one_date = 4003 * 5 * 8;
  EXPECT_EQ(spec.plan.chunk_axis_reason, "auto: one date needs 3 buffer(s) x " + format_bytes(one_date) +
                                             " for one date + multBy " + format_bytes(one_date) + " = " +
                                             format_bytes(4 * one_date) + ", over memory.host_budget 512 KiB");
  const Plan plan = make_plan(spec.plan);  // the id slabs fit
  EXPECT_TRUE(plan.mult_per_slab);
  EXPECT_EQ(plan.total_elements(), 101u * 4003 * 5);
  EXPECT_LE(plan.host_bytes, 512u << 10);
  EXPECT_NE(plan.describe().find("chunk axis     id,"), std::string::npos);
  EXPECT_NE(plan.describe().find("(auto: one date needs 3 buffer(s)"), std::string::npos) << plan.describe();

  // The device budget counts too: a GPU build whose device budget cannot
  // hold one date takes id although the host could.
  Config gpu = base_config();
  gpu.output.direct_io = false;
  gpu.memory.device_budget = parse_memory_size("300KiB");
  SystemFacts f = facts();
  f.separate_device_memory = true;
  const JobSpec device = resolve(gpu, f);
  EXPECT_EQ(device.plan.chunk_axis, Axis::id);
  EXPECT_NE(device.plan.chunk_axis_reason.find("over memory.device_budget 300 KiB"), std::string::npos)
      << device.plan.chunk_axis_reason;

  // Neither fits: the plan's error says auto tried date too.
  c.memory.host_budget = parse_memory_size("8KiB");
  const JobSpec tiny = resolve(c, facts());
  EXPECT_EQ(tiny.plan.chunk_axis, Axis::id);
  try {
    make_plan(tiny.plan);
    FAIL() << "8 KiB holds no three id slabs of 101 x 5";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    EXPECT_NE(std::string(e.what()).find("one date does not fit either"), std::string::npos) << e.what();
  }
}

TEST(Resolve, ChunkAxisExplicitValuesOverrideAuto) {
  Config c = base_config();
  c.output.direct_io = false;
  c.memory.host_budget = parse_memory_size("512KiB");
  c.memory.chunk_axis = Axis::date;  // does not fit: refused by the plan, not switched
  JobSpec spec = resolve(c, facts());
  EXPECT_EQ(spec.plan.chunk_axis, Axis::date);
  EXPECT_FALSE(spec.plan.chunk_axis_auto);
  EXPECT_EQ(spec.plan.chunk_axis_reason, "set by memory.chunk_axis");
  EXPECT_THROW(make_plan(spec.plan), Error);
  c.memory.host_budget = parse_memory_size("64MiB");
  c.memory.chunk_axis = Axis::id;  // date would fit
  spec = resolve(c, facts());
  EXPECT_EQ(spec.plan.chunk_axis, Axis::id);
  EXPECT_EQ(spec.output.chunk_axis, Axis::id);
  // An explicit value wins over the axis a partial recorded: the resume is
  // then refused, naming the setting (io/output.cpp).
  SystemFacts f = facts();
  f.recorded_chunk_axis = Axis::date;
  f.recorded_in = "the existing partial";
  EXPECT_EQ(resolve(c, f).plan.chunk_axis, Axis::id);
}

// A resume keeps the partial's axis under auto, whatever the budgets say now.
TEST(Resolve, ChunkAxisAutoKeepsTheRecordedAxis) {
  Config c = base_config();
  c.output.direct_io = false;
  c.memory.host_budget = parse_memory_size("512KiB");  // auto alone would take id
  SystemFacts f = facts();
  f.recorded_chunk_axis = Axis::date;
  f.recorded_in = "the existing partial";
  const JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.plan.chunk_axis, Axis::date);
  EXPECT_EQ(spec.plan.chunk_axis_reason, "auto: kept from the existing partial");
  try {  // 512 KiB holds no date slab: the plan's error says why date stays
    make_plan(spec.plan);
    FAIL() << "one date does not fit 512 KiB";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(memory.chunk_axis: auto keeps the date slabs of the existing partial; "
                                         "--restart starts over with the axis that fits)"),
              std::string::npos)
        << e.what();
  }
  c.memory.host_budget = parse_memory_size("64MiB");  // auto alone would take date
  f.recorded_chunk_axis = Axis::id;
  f.recorded_in = "the finished output";
  EXPECT_EQ(resolve(c, f).plan.chunk_axis, Axis::id);
  EXPECT_EQ(resolve(c, f).plan.chunk_axis_reason, "auto: kept from the finished output");
}

// The identity holds the resolved axis: a job auto resolves to date has the
// identity it had when date was the default, so partials written before
// auto existed still resume.
TEST(Resolve, ChunkAxisAutoIdentityIsTheResolvedAxis) {
  Config c = base_config();
  const std::string auto_date = resolve(c, facts()).identity;
  EXPECT_NE(auto_date.find("\nmemory.chunk_axis: date\n"), std::string::npos) << auto_date;
  c.memory.chunk_axis = Axis::date;
  EXPECT_EQ(resolve(c, facts()).identity, auto_date);
  c.memory.chunk_axis = Axis::id;
  const std::string explicit_id = resolve(c, facts()).identity;
  c.memory.chunk_axis.reset();
  c.memory.host_budget = parse_memory_size("512KiB");
  c.output.direct_io = false;
  EXPECT_EQ(resolve(c, facts()).identity, explicit_id);
}

// A refused resume names what changed, was and now (io/identity.hpp), from
// the identity texts resolve writes.
TEST(Resolve, IdentityChangeNamesTheLinesThatDiffer) {
  Config c = base_config();
  const std::string before = resolve(c, facts()).identity;
  EXPECT_EQ(identity_change(before, before), "");
  c.memory.chunk_axis = Axis::id;
  EXPECT_EQ(identity_change(before, resolve(c, facts()).identity), "memory.chunk_axis: was date, now id");
  SystemFacts other = facts();
  other.input.identity = "HDF5 file of 10 bytes, sampled content 00000000000000ff";
  c.memory.chunk_axis = Axis::date;
  const std::string change = identity_change(before, resolve(c, other).identity);
  EXPECT_EQ(change.rfind("input: was ", 0), 0u) << change;
  EXPECT_NE(change.find(", now HDF5 file of 10 bytes, sampled content 00000000000000ff"), std::string::npos) << change;
  EXPECT_EQ(identity_change("a: 1\n", "a: 1\nb: 2\n"), "b: was (none), now 2");
}

// A rule across two sections (output.mode, verify) lives here, not in the parser.
TEST(Resolve, VerifyNeedsAnOutputFile) {
  Config c = base_config();
  c.output.mode = OutputMode::checksum;
  EXPECT_EQ(config_error_of(c, facts()), "");
  c.verify = VerifyMode::sample;
  EXPECT_EQ(config_error_of(c, facts()),
            "job.yaml: 'verify' needs an output file; it cannot be used with output.mode: checksum");
  EXPECT_THROW(check_config(c), Error);  // before any input is opened
}

// memory.max_slab: auto gives a job about kAutoSlabs slabs between the floor
// and the cap.
TEST(Defaults, AutoMaxSlabBetweenFloorAndCap) {
  EXPECT_EQ(auto_max_slab(0), kAutoSlabMin);
  EXPECT_EQ(auto_max_slab(kAutoSlabs * kAutoSlabMin - 1), kAutoSlabMin);
  EXPECT_EQ(auto_max_slab(kAutoSlabs * kAutoSlabMin + kAutoSlabs), kAutoSlabMin + 1);
  EXPECT_EQ(auto_max_slab(std::uint64_t{2} << 30), std::uint64_t{128} << 20);  // 2 GiB: 16 slabs
  EXPECT_EQ(auto_max_slab(kAutoSlabs * kAutoSlabMax), kAutoSlabMax);
  EXPECT_EQ(auto_max_slab(std::uint64_t{80} << 30), kAutoSlabMax);

  Config c = base_config();
  c.memory.host_budget = parse_memory_size("64GiB");
  const JobSpec spec = resolve(c, facts(200, 250000, 5));  // 2 GB of discount
  EXPECT_EQ(spec.plan.max_slab, auto_max_slab(200ull * 250000 * 5 * 8));
  // 125 MB over 10 MB dates: 12 dates a slab, 17 slabs.
  EXPECT_EQ(make_plan(spec.plan).slabs.size(), 17u);
  c.memory.max_slab = parse_memory_size("64MiB");  // a given size wins
  EXPECT_EQ(resolve(c, facts(200, 250000, 5)).plan.max_slab, std::uint64_t{64} << 20);
}

// memory.staging: none: about kSlabsPerThread slabs per thread, same floor and cap.
TEST(Defaults, AutoMaxSlabUnstagedGivesEachThreadSeveralSlabs) {
  EXPECT_EQ(auto_max_slab_unstaged(0, 16), kAutoSlabMin);
  EXPECT_EQ(auto_max_slab_unstaged(std::uint64_t{20} << 30, 16), (std::uint64_t{20} << 30) / 128);
  EXPECT_EQ(auto_max_slab_unstaged(std::uint64_t{20} << 30, 0), kAutoSlabMax);  // one thread at least
  EXPECT_EQ(auto_max_slab_unstaged(std::uint64_t{80} << 30, 4), kAutoSlabMax);
}

// The staging ring (ring_buffers x the slab), pinned or not, stays within
// kAutoRing, never below the floor.
TEST(Defaults, AutoMaxSlabKeepsTheRingSmall) {
  const std::uint64_t big = std::uint64_t{80} << 30;
  EXPECT_EQ(auto_max_slab(big, 0), kAutoSlabMax);
  EXPECT_EQ(auto_max_slab(big, 4), kAutoSlabMax);  // 4 x 256 MiB = 1 GiB: at the bound
  EXPECT_EQ(auto_max_slab(big, 5), kAutoRing / 5);
  EXPECT_EQ(auto_max_slab(big, 12), kAutoRing / 12);
  EXPECT_EQ(auto_max_slab(big, 64), kAutoSlabMin);                       // 16 MiB: the floor wins
  EXPECT_EQ(auto_max_slab(std::uint64_t{2} << 30, 12), kAutoRing / 12);  // 85 MiB, not 2 GiB / 16
  EXPECT_EQ(auto_max_slab(std::uint64_t{2} << 30, 3), std::uint64_t{128} << 20);

  // resolve(): device copies with split's ring of writers + 2 buffers.
  Config c = base_config();
  c.memory.host_budget = parse_memory_size("64GiB");
  c.output.layout = OutputLayout::split;
  c.output.parts = 10;
  SystemFacts f = facts(200, 2500000, 5);  // 20 GB
  f.writer_threads = 8;
  f.separate_device_memory = true;
  JobSpec spec = resolve(c, f);
  ASSERT_TRUE(spec.plan.device_copies);
  EXPECT_EQ(spec.plan.pipeline_depth, 12);
  EXPECT_EQ(spec.plan.max_slab, kAutoRing / 12);
  c.compute.space = Space::host;  // no copies: the ring is in plain host memory, and as small
  EXPECT_EQ(resolve(c, f).plan.max_slab, kAutoRing / 12);
  c.output.layout = OutputLayout::single;  // one writer, a ring of 3 x 256 MiB: within the bound
  EXPECT_EQ(resolve(c, f).plan.pipeline_depth, 3);
  EXPECT_EQ(resolve(c, f).plan.max_slab, kAutoSlabMax);
}

// How slabs lie in the file: the runs io/box.hpp's box_runs would cut.
TEST(Defaults, SlabReadShapeMatchesTheBoxRuns) {
  PlanRequest r;
  r.dates = 10;
  r.ids = 1000;
  r.nums = 5;
  r.host_budget = std::uint64_t{1} << 30;
  r.max_slab = 3 * 1000 * 5 * 8;  // three dates, or 300 ids (10 dates x 5 nums each)
  r.chunk_axis = Axis::date;
  const std::array<std::int64_t, 3> source{10, 1000, 5};
  const Plan by_date = make_plan(r);
  const auto standard = slab_read_shape(by_date, {Axis::date, Axis::id, Axis::num}, source);
  EXPECT_EQ(standard.runs, 1u);
  EXPECT_EQ(standard.run_bytes, 3u * 1000 * 5 * 8);
  const auto transposed = slab_read_shape(by_date, {Axis::id, Axis::date, Axis::num}, source);
  EXPECT_EQ(transposed.runs, 1000u);
  EXPECT_EQ(transposed.run_bytes, 3u * 5 * 8);
  r.chunk_axis = Axis::id;
  const Plan by_id = make_plan(r);
  ASSERT_EQ(by_id.slab_extent, 300);
  const auto id_standard = slab_read_shape(by_id, {Axis::date, Axis::id, Axis::num}, source);
  EXPECT_EQ(id_standard.runs, 10u);
  EXPECT_EQ(id_standard.run_bytes, 300u * 5 * 8);
  const auto id_transposed = slab_read_shape(by_id, {Axis::id, Axis::date, Axis::num}, source);
  EXPECT_EQ(id_transposed.runs, 1u);
  // A selection of the ids: the runs stop at the selection's edge.
  const auto selected = slab_read_shape(by_date, {Axis::date, Axis::id, Axis::num}, {10, 5000, 5});
  EXPECT_EQ(selected.runs, 3u);
  EXPECT_EQ(selected.run_bytes, 1000u * 5 * 8);
}

// chunk_axis: auto weighs the file's layout: in a transposed [id, date, num]
// file, date slabs of k dates read one run of k x nums x 8 bytes per id. At
// kEfficientRun exactly (16384 dates of 8 nums) date stays; one date fewer
// per slab and id slabs, one long run each, win.
TEST(Defaults, ChunkAxisAutoWeighsTheLayoutAtTheBoundary) {
  Config c = base_config();
  c.output.direct_io = false;
  c.memory.host_budget = parse_memory_size("4GiB");
  SystemFacts f = facts(20000, 100, 8);
  f.input.axes = {Axis::id, Axis::date, Axis::num};
  const std::uint64_t one_date = 100 * 8 * 8;
  c.memory.max_slab = parse_memory_size(std::to_string(16384 * one_date));
  JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.plan.chunk_axis, Axis::date) << spec.plan.chunk_axis_reason;
  EXPECT_EQ(slab_read_shape(make_plan(spec.plan), f.input.axes, {20000, 100, 8}).run_bytes, kEfficientRun);

  c.memory.max_slab = parse_memory_size(std::to_string(16383 * one_date));
  spec = resolve(c, f);
  EXPECT_EQ(spec.plan.chunk_axis, Axis::id);
  EXPECT_EQ(spec.output.chunk_axis, Axis::id);
  EXPECT_EQ(spec.plan.chunk_axis_reason,
            "auto: in this file's [id, date, num] layout a date slab reads 100 run(s) of " +
                format_bytes(16383 * 8 * 8) + ", an id slab 1 run(s) of " +
                format_bytes(make_plan(spec.plan).slab_bytes));

  // The standard layout keeps date slabs however short the slabs.
  f.input.axes = {Axis::date, Axis::id, Axis::num};
  EXPECT_EQ(resolve(c, f).plan.chunk_axis, Axis::date);
  // A configured axis, or one an earlier run recorded, is never second-guessed.
  f.input.axes = {Axis::id, Axis::date, Axis::num};
  f.recorded_chunk_axis = Axis::date;
  EXPECT_EQ(resolve(c, f).plan.chunk_axis, Axis::date);
  f.recorded_chunk_axis.reset();
  c.memory.chunk_axis = Axis::date;
  EXPECT_EQ(resolve(c, f).plan.chunk_axis, Axis::date);
}

// output.layout: split: the part count (auto from the output's size and about
// twice the I/O writer threads), one writer per part up to that, a ring of
// writers + 2 buffers, the layout in the identity (a single partial is not
// resumed as split) and the bounce buffers budgeted per writer.
TEST(Resolve, SplitLayoutPartsWritersAndRing) {
  Config c = base_config();
  c.output.layout = OutputLayout::split;
  c.output.parts = 4;
  SystemFacts f = facts();  // 3 writer threads: 6 cores counted
  JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.output.layout, OutputLayout::split);
  EXPECT_EQ(spec.output.parts, 4);
  EXPECT_EQ(spec.output.writers, 4);
  EXPECT_EQ(spec.plan.pipeline_depth, 6);
  EXPECT_NE(spec.identity.find("output.layout: split\n"), std::string::npos);
  const JobSpec single = resolve(base_config(), f);
  EXPECT_EQ(single.identity.find("output.layout"), std::string::npos);  // earlier outputs keep their identity
  EXPECT_EQ(single.plan.pipeline_depth, 3);
  EXPECT_EQ(spec.plan.staging_bytes, 4 * single.plan.staging_bytes);
  c.output.parts = 40;  // more parts than cores: 6 writers
  EXPECT_EQ(resolve(c, f).output.writers, 6);
  EXPECT_EQ(resolve(c, f).plan.pipeline_depth, 8);
  // auto: 101 x 4003 x 5 doubles (16 MB) stay in one part, one writer, the ring as set.
  c.output.parts = 0;
  spec = resolve(c, f);
  EXPECT_EQ(spec.output.parts, 1);
  EXPECT_EQ(spec.output.writers, 1);
  EXPECT_EQ(spec.plan.pipeline_depth, 3);
  // 2000 x 100003 x 5 doubles (8 GB) on a memory-backed file system: 4 parts of 2 GiB.
  SystemFacts memory = facts(2000, 100003, 5);
  memory.output_memory_backed = true;
  spec = resolve(c, memory);
  EXPECT_EQ(spec.output.parts, 4);
  // On a disk: two per core (6 counted).
  EXPECT_EQ(resolve(c, facts(2000, 100003, 5)).output.parts, 12);
  // Under 3 ranks, a multiple of them: each rank's share of a fresh run is whole parts.
  SystemFacts three = memory;
  three.ranks = 3;
  EXPECT_EQ(resolve(c, three).output.parts, 6);
  three.ranks = 4;
  EXPECT_EQ(resolve(c, three).output.parts, 4);
}

// output.layout: auto (the default): split on a memory-backed file system
// from two parts' worth of output (auto_parts: 256 MiB), single on other file
// systems and below that; an earlier run's layout wins; a configured layout
// and a checksum output are kept as they are.
TEST(LayoutChoice, AutoFollowsTheFileSystemTheSizeAndAnEarlierRun) {
  LayoutFacts f;
  f.cores = 16;
  f.memory_backed = true;
  f.output_bytes = (std::uint64_t{256} << 20) - 1;
  LayoutChoice c = choose_layout(OutputLayout::automatic, OutputMode::file, f);
  EXPECT_EQ(c.layout, OutputLayout::single);
  EXPECT_NE(c.reason.find("under 256 MiB"), std::string::npos) << c.reason;
  f.output_bytes += 1;
  c = choose_layout(OutputLayout::automatic, OutputMode::file, f);
  EXPECT_EQ(c.layout, OutputLayout::split);
  EXPECT_NE(c.reason.find("memory-backed"), std::string::npos) << c.reason;
  f.memory_backed = false;
  f.output_bytes = std::uint64_t{80} << 30;
  c = choose_layout(OutputLayout::automatic, OutputMode::file, f);
  EXPECT_EQ(c.layout, OutputLayout::single);
  EXPECT_NE(c.reason.find("not a memory-backed"), std::string::npos) << c.reason;
  // What an earlier run of this output used is kept, either way.
  f.recorded = OutputLayout::split;
  f.recorded_in = "the existing partial";
  c = choose_layout(OutputLayout::automatic, OutputMode::file, f);
  EXPECT_EQ(c.layout, OutputLayout::split);
  EXPECT_EQ(c.reason, "auto: kept from the existing partial");
  f.memory_backed = true;
  f.recorded = OutputLayout::single;
  EXPECT_EQ(choose_layout(OutputLayout::automatic, OutputMode::file, f).layout, OutputLayout::single);
  // A configured layout, and a checksum output (no file: no layout).
  EXPECT_EQ(choose_layout(OutputLayout::split, OutputMode::file, f).layout, OutputLayout::split);
  EXPECT_EQ(choose_layout(OutputLayout::single, OutputMode::file, f).reason, "set by output.layout");
  f.recorded.reset();
  c = choose_layout(OutputLayout::automatic, OutputMode::checksum, f);
  EXPECT_EQ(c.layout, OutputLayout::single);
  EXPECT_TRUE(c.reason.empty());
}

// resolve() with layout auto: the split decision reaches the output's spec,
// its part count and the identity (a resume must find the same layout).
TEST(Resolve, AutoLayoutSplitsOnMemoryBackedFileSystems) {
  Config c = base_config();
  ASSERT_EQ(c.output.layout, OutputLayout::automatic);  // the default
  SystemFacts f = facts(2000, 100003, 5);               // 8 GB of output
  JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.output.layout, OutputLayout::single);
  EXPECT_EQ(spec.identity.find("output.layout"), std::string::npos);
  f.output_memory_backed = true;
  spec = resolve(c, f);
  EXPECT_EQ(spec.output.layout, OutputLayout::split);
  EXPECT_EQ(spec.output.parts, 4);
  EXPECT_TRUE(spec.output.parts_auto);
  EXPECT_NE(spec.identity.find("output.layout: split\n"), std::string::npos);
  EXPECT_NE(spec.report.layout_reason.find("memory-backed"), std::string::npos);
  f.recorded_layout = OutputLayout::single;  // a partial written single stays single
  f.recorded_in = "the existing partial";
  spec = resolve(c, f);
  EXPECT_EQ(spec.output.layout, OutputLayout::single);
  EXPECT_EQ(spec.report.layout_reason, "auto: kept from the existing partial");
}

// auto on a disk: none for an output of up to kUnstagedDiskBytes, in host
// memory and one process (the ring's fixed costs outweigh a small job's
// streaming); larger outputs, a GPU and MPI keep the ring.
TEST(Resolve, StagingAutoTakesNoneForASmallOutputOnADisk) {
  Config c = base_config();
  c.compute.space = Space::host;
  const std::int64_t ids = static_cast<std::int64_t>(kUnstagedDiskBytes / (100 * 5 * 8));  // 2 GiB at most
  SystemFacts f = facts(100, ids, 5);
  f.input.visits_as_read = f.input.reads_ranges = true;
  f.output_memory_backed = false;
  JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.pipeline.staging, Staging::none);
  EXPECT_EQ(spec.output.layout, OutputLayout::single);
  EXPECT_FALSE(spec.output.direct_io);
  EXPECT_EQ(spec.plan.piece_bytes, kCachePieceBytes);  // one thread
  EXPECT_EQ(spec.plan.max_slab, auto_max_slab_unstaged(100ull * ids * 5 * 8, 1));
  EXPECT_EQ(make_plan(spec.plan).slabs.size() >= 8, true);
  SystemFacts larger = facts(100, ids + 1, 5);  // one id more than the page cache rule takes
  larger.input = f.input;
  larger.input.ids = ids + 1;
  EXPECT_EQ(resolve(c, larger).pipeline.staging, Staging::ring);
  SystemFacts two_ranks = f;
  two_ranks.ranks = 2;
  EXPECT_EQ(resolve(c, two_ranks).pipeline.staging, Staging::ring);
  Config gpu = c;
  gpu.compute.space = Space::device;
  SystemFacts with_gpu = f;
  with_gpu.separate_device_memory = true;
  EXPECT_EQ(resolve(gpu, with_gpu).pipeline.staging, Staging::ring);
  Config ring = c;
  ring.memory.staging = Staging::ring;
  EXPECT_EQ(resolve(ring, f).pipeline.staging, Staging::ring);
  Config small_budget = c;  // a budget under kUnstagedDiskBudget keeps the ring's smaller buffers
  small_budget.memory.host_budget = parse_memory_size("255MiB");
  EXPECT_EQ(resolve(small_budget, f).pipeline.staging, Staging::ring);
}

// memory.staging: auto takes none for a split output on a memory-backed file
// system in host memory, with one part per core and slabs cut for the
// threads; on a disk an output this large (8 GB) keeps the ring. none, asked
// for, runs anywhere it can and is refused, saying why, where it cannot.
// Arrays in memory (the Python module's multiply) on a GPU: auto takes none,
// its threads sharing every slab's pieces; the ring stays in host memory, for
// budgets under four times the threads' pieces, for id slabs and for a
// slicing of the user's.
TEST(Resolve, ArraysInMemoryOnAGpuTakeSharedPieces) {
  Config c = base_config();
  c.output.mode = OutputMode::checksum;  // as multiply() configures it: no file
  c.input.nonfinite = NonFinite::propagate;
  c.compute.space = Space::device;
  SystemFacts f = facts(50, 1000003, 5);
  f.input.visits_as_read = f.input.reads_ranges = true;
  f.separate_device_memory = true;
  f.output_piece_threads = 16;
  JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.pipeline.staging, Staging::none);
  EXPECT_EQ(spec.plan.piece_bytes, 16 * kCachePieceBytes);
  EXPECT_EQ(spec.plan.chunk_axis, Axis::date);
  const std::uint64_t floor = 4 * 16 * kCachePieceBytes;
  Config tight = c;
  tight.memory.host_budget = MemorySize{false, 0.0, floor - 1};
  EXPECT_EQ(resolve(tight, f).pipeline.staging, Staging::ring);
  tight = c;
  tight.memory.device_budget = MemorySize{false, 0.0, floor - 1};
  EXPECT_EQ(resolve(tight, f).pipeline.staging, Staging::ring);
  tight.memory.device_budget = MemorySize{false, 0.0, floor};
  EXPECT_EQ(resolve(tight, f).pipeline.staging, Staging::none);
  Config by_id = c;
  by_id.memory.chunk_axis = Axis::id;
  EXPECT_EQ(resolve(by_id, f).pipeline.staging, Staging::ring);
  Config tiled = c;
  tiled.compute.tile = {2, 8, 5};  // one per parallel dim, as check_config requires
  EXPECT_EQ(resolve(tiled, f).pipeline.staging, Staging::ring);
  Config host = c;
  host.compute.space = Space::host;
  EXPECT_EQ(resolve(host, f).pipeline.staging,
            Staging::ring);  // host arrays in host space: the ring (or multiply's direct pass)
  SystemFacts no_gpu = f;
  no_gpu.separate_device_memory = false;
  EXPECT_EQ(resolve(c, no_gpu).pipeline.staging, Staging::ring);
}

TEST(Resolve, StagingNoneWhereEachThreadWritesItsOwnPart) {
  Config c = base_config();
  c.compute.space = Space::host;
  SystemFacts f = facts(2000, 100003, 5);  // 8 GB
  f.input.visits_as_read = f.input.reads_ranges = true;
  f.output_memory_backed = true;
  JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.pipeline.staging, Staging::none);
  EXPECT_EQ(spec.pipeline.kernel, KernelKind::fused);
  EXPECT_EQ(spec.output.layout, OutputLayout::split);
  EXPECT_EQ(spec.output.parts, 6);  // one per core (6 counted), not 4 of 2 GiB
  EXPECT_EQ(spec.output.writers, 6);
  EXPECT_EQ(spec.plan.max_slab, auto_max_slab_unstaged(2000ull * 100003 * 5 * 8, 6));
  EXPECT_EQ(spec.report.slicing, kUnstagedSlicing);
  EXPECT_TRUE(spec.plan.unstaged);
  EXPECT_FALSE(spec.output.direct_io);  // ~1 MiB pieces through the page cache
  EXPECT_TRUE(spec.output.pieces);
  EXPECT_EQ(spec.plan.staging_bytes, 0u);  // no O_DIRECT bounce buffers
  EXPECT_EQ(spec.plan.piece_bytes, 6 * kCachePieceBytes);
  EXPECT_EQ(make_plan(spec.plan).host_buffers, 1);  // no ring: one slab buffer for a slab across a part's edge
  c.memory.staging = Staging::ring;
  spec = resolve(c, f);
  EXPECT_EQ(spec.pipeline.staging, Staging::ring);
  EXPECT_EQ(spec.output.parts, 4);
  EXPECT_TRUE(spec.output.direct_io);
  EXPECT_GT(spec.plan.staging_bytes, 0u);
  c.memory.staging = Staging::automatic;
  f.output_memory_backed = false;
  EXPECT_EQ(resolve(c, f).pipeline.staging, Staging::ring);
  c.memory.staging = Staging::none;
  EXPECT_EQ(resolve(c, f).pipeline.staging, Staging::none);
  const auto refused = [&](const Config& config, const SystemFacts& facts, const std::string& says) {
    const std::string error = config_error_of(config, facts);
    EXPECT_NE(error.find("memory.staging: none"), std::string::npos) << error;
    EXPECT_NE(error.find(says), std::string::npos) << error;
  };
  Config mdrange = c;
  mdrange.compute.kernel = KernelKind::mdrange;
  refused(mdrange, f, "compute.kernel");
  Config by_id = c;
  by_id.memory.chunk_axis = Axis::id;
  refused(by_id, f, "id slabs");
  Config checksum = c;
  checksum.output.mode = OutputMode::checksum;
  refused(checksum, f, "output.mode: file");
  // With a GPU each piece goes there and back, asked for or by auto.
  Config gpu = c;
  gpu.compute.space = Space::device;
  SystemFacts with_gpu = f;
  with_gpu.separate_device_memory = true;
  with_gpu.output_memory_backed = true;
  spec = resolve(gpu, with_gpu);
  EXPECT_EQ(spec.pipeline.staging, Staging::none);
  EXPECT_EQ(spec.report.slicing, kUnstagedDeviceSlicing);
  EXPECT_EQ(make_plan(spec.plan).device_buffers, 0);
  EXPECT_EQ(make_plan(spec.plan).device_bytes,
            make_plan(spec.plan).mult_bytes + kDevicePiecesPerThread * spec.plan.piece_bytes);
  gpu.memory.staging = Staging::automatic;
  EXPECT_EQ(resolve(gpu, with_gpu).pipeline.staging, Staging::none);
  with_gpu.output_memory_backed = false;
  EXPECT_EQ(resolve(gpu, with_gpu).pipeline.staging, Staging::ring);
  with_gpu.output_memory_backed = true;
  gpu.memory.staging = Staging::none;
  gpu.compute.tile = {8};
  refused(gpu, with_gpu, "default slicing");
  SystemFacts hdf5_reads = f;
  hdf5_reads.input.reads_ranges = false;
  refused(c, hdf5_reads, "positional reads");
  // auto with id slabs (a budget too small for a date slab) keeps the ring.
  c.memory.staging = Staging::automatic;
  c.memory.chunk_axis = Axis::id;
  f.output_memory_backed = true;
  EXPECT_EQ(resolve(c, f).pipeline.staging, Staging::ring);
}
