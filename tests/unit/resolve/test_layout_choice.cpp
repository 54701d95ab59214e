// The output layout, parts, writers and staging resolve() chooses (resolve/layout_choice.hpp).
// Links the pure parts only (no Kokkos, no HDF5).
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

// A compressed input whose chunks the app decodes (and reads in ranges):
// auto takes none where several threads write parts of their own (each
// decodes its own slabs), and keeps the ring, which decodes every slab on all
// cores, for one output file on a disk.
TEST(Resolve, StagingAutoForACompressedInputFollowsTheWriters) {
  Config c = base_config();
  c.compute.space = Space::host;
  SystemFacts f = facts(40, 2500000, 5);  // 4 GB: split on a memory-backed file system
  f.input.visits_as_read = f.input.reads_ranges = true;
  f.input.chunks = ChunkGrid{1, 50000, 50000 * 5 * 8, 16};
  f.output_memory_backed = true;
  JobSpec spec = resolve(c, f);
  EXPECT_EQ(spec.output.layout, OutputLayout::split);
  EXPECT_GE(spec.output.writers, 2);
  EXPECT_EQ(spec.pipeline.staging, Staging::none);
  SystemFacts disk = facts(40, 200000, 5);  // 320 MB on a disk: one file
  disk.input = f.input;
  disk.input.ids = 200000;
  disk.output_memory_backed = false;
  spec = resolve(c, disk);
  EXPECT_EQ(spec.output.layout, OutputLayout::single);
  EXPECT_EQ(spec.pipeline.staging, Staging::ring);
  disk.input.chunks = ChunkGrid{};  // the same job on a contiguous input: none
  EXPECT_EQ(resolve(c, disk).pipeline.staging, Staging::none);
  Config none = c;  // asked for, none runs on its one writer
  none.memory.staging = Staging::none;
  disk.input.chunks = f.input.chunks;
  EXPECT_EQ(resolve(none, disk).pipeline.staging, Staging::none);
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
  refused(c, hdf5_reads, "read through HDF5");
  SystemFacts thick_chunks = hdf5_reads;  // decoded on the app's threads, but not piece by piece
  thick_chunks.input.chunks.threads = 2;
  refused(c, thick_chunks, "this input's chunks are not");
  // auto with id slabs (a budget too small for a date slab) keeps the ring.
  c.memory.staging = Staging::automatic;
  c.memory.chunk_axis = Axis::id;
  f.output_memory_backed = true;
  EXPECT_EQ(resolve(c, f).pipeline.staging, Staging::ring);
}
