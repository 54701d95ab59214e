// The split output's part count and its virtual dataset (io/records/output_parts.hpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <fstream>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/input.hpp"
#include "io/input/memory_arrays.hpp"
#include "io/output/output.hpp"
#include "io/records/output_parts.hpp"
#include "io/posix/posix_io.hpp"
#include "io/input/synthetic.hpp"
#include "commands/tools.hpp"

#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using TempDir = discount::test_support::TempDir;

#include "support/output_files.hpp"

using namespace discount::test_support;

TEST(OutputParts, AutoCountBoundsAndTheirText) {
  const std::uint64_t MiB = std::uint64_t{1} << 20, GiB = std::uint64_t{1} << 30;
  for (bool memory : {true, false}) {
    EXPECT_EQ(auto_parts(255 * MiB, 16, memory), 1);     // small outputs stay in one part
    EXPECT_EQ(auto_parts(256 * MiB, 16, memory), 2);     // at least 2 once big enough
    EXPECT_EQ(auto_parts(4000 * GiB, 256, memory), 64);  // 64 in all
    EXPECT_EQ(auto_parts(1 * GiB, 1, memory), 2);
  }
  EXPECT_EQ(auto_parts(200 * GiB, 16, true), 16);   // memory-backed: at most one per core
  EXPECT_EQ(auto_parts(200 * GiB, 16, false), 32);  // a disk: two per core
  // Memory-backed: one per 2 GiB.
  EXPECT_EQ(auto_parts(20 * GiB, 16, true), 10);
  EXPECT_EQ(auto_parts(20 * GiB + 1, 16, true), 11);
  // A disk: two per core, each at least 256 MiB.
  EXPECT_EQ(auto_parts(10 * GiB, 16, false), 32);
  EXPECT_EQ(auto_parts(8 * GiB - 1, 16, false), 31);
  EXPECT_EQ(auto_parts(1 * GiB, 16, false), 4);
  EXPECT_EQ(auto_parts(1 * GiB - 1, 16, false), 3);
  EXPECT_EQ(auto_parts(4 * GiB, 4, false), 8);
  EXPECT_EQ(auto_parts(4 * GiB, 3, false), 6);
  std::vector<Range> slabs;
  for (std::int64_t d = 0; d < 13; ++d) slabs.push_back({d, d + 1});
  EXPECT_EQ(part_bounds(slabs, 13, 4), (std::vector<std::int64_t>{0, 3, 6, 9, 13}));
  EXPECT_EQ(part_bounds(slabs, 13, 40).size(), 14u);  // cut to the slabs
  EXPECT_EQ(part_bounds(slabs, 13, 1), (std::vector<std::int64_t>{0, 13}));
  // Uneven slabs: parts end at slab edges.
  EXPECT_EQ(part_bounds({{0, 5}, {5, 10}, {10, 11}}, 11, 2), (std::vector<std::int64_t>{0, 5, 11}));
  EXPECT_EQ(parse_bounds(bounds_text({0, 3, 6, 13}), 13), (std::vector<std::int64_t>{0, 3, 6, 13}));
  EXPECT_TRUE(parse_bounds("0,3,6,12", 13).empty());  // must end at the unit count
  EXPECT_TRUE(parse_bounds("0,6,3,13", 13).empty());  // increasing
  EXPECT_TRUE(parse_bounds("0,x,13", 13).empty());
  EXPECT_TRUE(parse_bounds("", 13).empty());
  EXPECT_TRUE(is_parts_folder_of("out.h5.parts-1a", "out.h5"));
  EXPECT_FALSE(is_parts_folder_of("out.h5.parts-", "out.h5"));
  EXPECT_FALSE(is_parts_folder_of("xout.h5.parts-1a", "out.h5"));
}

// Split layout with the chunk axis inside ([id][date][num]): slabs inside one
// part and a slab across a part's edge (a resume whose plan cut slabs
// differently) land where the virtual dataset reads them.
TEST(Output, SplitLayoutWritesEverySlabWhereTheVirtualDatasetReadsIt) {
  TempDir dir;
  const std::string out = dir / "cv.h5";
  const std::int64_t dates = 5, ids = 3, nums = 2;
  OutputSpec spec = spec_for(out, dates, ids, nums);
  spec.axes = {Axis::id, Axis::date, Axis::num};
  spec.layout = OutputLayout::split;
  spec.parts = 2;
  spec.slabs = 5;
  for (std::int64_t d = 0; d < dates; ++d) spec.slab_units.push_back({d, d + 1});
  spec.identity = "identity: test";
  std::vector<double> full(static_cast<std::size_t>(ids * dates * nums));  // file order [id][date][num]
  for (std::size_t e = 0; e < full.size(); ++e) full[e] = -3.5 + 0.25 * static_cast<double>(e + 1);
  const auto packed = [&](std::int64_t d0, std::int64_t d1) {
    std::vector<double> slab;
    for (std::int64_t i = 0; i < ids; ++i)
      for (std::int64_t d = d0; d < d1; ++d)
        for (std::int64_t k = 0; k < nums; ++k)
          slab.push_back(full[static_cast<std::size_t>((i * dates + d) * nums + k)]);
    return slab;
  };
  std::string folder;
  {
    FileOutput sink(spec);
    EXPECT_EQ(sink.writer_threads(), 2);
    folder = sink.parts_folder();
    ASSERT_FALSE(folder.empty());
    EXPECT_TRUE(fs::exists(folder + "/part-00000.h5"));
    EXPECT_TRUE(fs::exists(folder + "/part-00001.h5"));
    // write_order interleaves the parts (bounds 0, 2, 5).
    EXPECT_EQ(sink.write_order({0, 1, 2, 3, 4}), (std::vector<int>{0, 2, 1, 3, 4}));
    auto a = packed(0, 1), b = packed(1, 4), c = packed(4, 5);
    sink.write_slab(slab_of(0, 1, ids, nums, 0), a.data());
    sink.write_slab(slab_of(1, 4, ids, nums, 1), b.data());  // across the edge at date 2
    sink.write_slab(slab_of(4, 5, ids, nums, 2), c.data());
    sink.publish();
  }
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_TRUE(fs::exists(folder));
  EXPECT_EQ(read_all(out, "cv"), full);
}
