// The automatic defaults resolve() takes (plan/defaults.hpp), from a Config and made-up
// facts. Links the pure parts only (no Kokkos, no HDF5).
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

// How slabs lie in the file: the runs io/posix/box.hpp's box_runs would cut.
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
