// resolve(): every cross-field rule and what each part of the job gets,
// from a Config and made-up facts. Links the pure parts only (no Kokkos, no HDF5).
#include <gtest/gtest.h>

#include "common/host_parallel.hpp"

#include <string>

#include "common/error.hpp"
#include "config/config.hpp"
#include "io/output/identity.hpp"
#include "io/posix/posix_io.hpp"
#include "kernels/features.hpp"
#include "plan/defaults.hpp"
#include "plan/plan.hpp"
#include "resolve/layout_choice.hpp"
#include "resolve/resolve.hpp"

using namespace discount;

#include "support/resolve_facts.hpp"

using namespace discount::test_support;

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
  // then refused, naming the setting (io/output/output.cpp).
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

// A refused resume names what changed, was and now (io/output/identity.hpp), from
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
