// Arrays in memory as the pipeline's input (io/input/memory_arrays.hpp), against plain loops.
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

// Arrays in memory hand each piece to the visitor right after copying it
// (compute.kernel: fused multiplies it there): every element exactly once,
// already in the buffer when visited, for float64 and strided float32 views
// large enough to be copied on several threads.
TEST(MemoryInput, VisitsEachPieceOnceRightAfterItsCopy) {
  const std::int64_t dates = 3, ids = 350003, nums = 2;  // 2.1 M elements: threaded copies
  std::vector<double> mult(static_cast<std::size_t>(ids * nums), 1.5);
  std::vector<double> disc64(static_cast<std::size_t>(dates * ids * nums));
  std::vector<float> disc32(disc64.size() * 2);  // every other float: a strided view
  for (std::size_t e = 0; e < disc64.size(); ++e) {
    disc64[e] = 1.0 + static_cast<double>(e % 1009) / 7.0;
    disc32[2 * e] = static_cast<float>(disc64[e]);
  }
  for (bool f32 : {false, true}) {
    ArrayRef m{mult.data(), ElementType::f64, 2, {ids, nums, 0}, {nums, 1, 0}, "mult"};
    ArrayRef d{f32 ? static_cast<void*>(disc32.data()) : static_cast<void*>(disc64.data()),
               f32 ? ElementType::f32 : ElementType::f64,
               3,
               {dates, ids, nums},
               f32 ? std::array<std::int64_t, 3>{2 * ids * nums, 2 * nums, 2}
                   : std::array<std::int64_t, 3>{ids * nums, nums, 1},
               "disc"};
    MemoryInput input(m, d, {Axis::date, Axis::id, Axis::num});
    ASSERT_TRUE(input.visits_as_read());
    const Range date_range{1, 3}, id_range{17, ids - 5};
    const std::int64_t n = date_range.size() * id_range.size() * nums;
    std::vector<double> buffer(static_cast<std::size_t>(n), std::nan(""));
    std::mutex mutex;
    std::vector<std::pair<std::int64_t, std::int64_t>> pieces;
    bool all_there = true;
    input.read_discount_visited(date_range, id_range, buffer.data(), [&](std::int64_t first, std::int64_t count) {
      bool there = true;
      for (std::int64_t e = first; e < first + count; ++e) {
        const std::int64_t row = e / nums, k = e % nums;
        const std::int64_t date = date_range.begin + row / id_range.size(), id = id_range.begin + row % id_range.size();
        there =
            there && buffer[static_cast<std::size_t>(e)] ==
                         static_cast<double>(f32 ? disc32[static_cast<std::size_t>(2 * ((date * ids + id) * nums + k))]
                                                 : disc64[static_cast<std::size_t>((date * ids + id) * nums + k)]);
      }
      std::lock_guard<std::mutex> lock(mutex);
      all_there = all_there && there;
      pieces.emplace_back(first, count);
    });
    EXPECT_TRUE(all_there) << (f32 ? "float32" : "float64") << ": a piece was visited before its copy";
    std::sort(pieces.begin(), pieces.end());
    std::int64_t covered = 0;
    for (const auto& [first, count] : pieces) {
      ASSERT_EQ(first, covered) << "pieces overlap or leave a gap";
      EXPECT_LE(count * 8, static_cast<std::int64_t>(2 * kCachePieceBytes));
      covered += count;
    }
    EXPECT_EQ(covered, n);
    EXPECT_GT(pieces.size(), 3u);
  }
}

// copy_box moves rows that lie next to each other in one copy: whole
// planes, rows within a plane, or row by row when a box cuts the last axis.
// Each box, both ways, against a plain loop, on an array large enough for
// threaded copies; the elements outside the box stay untouched.
// Where a GPU may copy a piece straight from or into an array pinned in
// place: one contiguous float64 run, and only then.
TEST(MemoryInput, PinnedRunIsWhereAContiguousPieceLies) {
  const std::int64_t dates = 3, ids = 7, nums = 5;
  std::vector<double> array(static_cast<std::size_t>(dates * ids * nums));
  ArrayRef a{array.data(), ElementType::f64, 3, {dates, ids, nums}, {ids * nums, nums, 1}, "disc"};
  const std::array<std::int64_t, 3> whole{dates, ids, nums};
  EXPECT_EQ(pinned_run(a, {0, 0, 0}, whole, 3, 40), nullptr) << "not pinned";
  a.pinned = true;
  EXPECT_EQ(pinned_run(a, {0, 0, 0}, whole, 3, 40), array.data() + 3) << "whole array: any range";
  EXPECT_EQ(pinned_run(a, {1, 0, 0}, {2, ids, nums}, 30, 50), array.data() + ids * nums + 30) << "whole planes";
  // Rows 2..5 of each plane: a range inside one plane's rows is one run, one
  // that crosses into the next plane is not.
  EXPECT_EQ(pinned_run(a, {0, 2, 0}, {dates, 4, nums}, 1, 19), array.data() + 2 * nums + 1);
  EXPECT_EQ(pinned_run(a, {0, 2, 0}, {dates, 4, nums}, 1, 20), nullptr) << "crosses a plane's edge";
  // Part of each row: only a range inside one row.
  EXPECT_EQ(pinned_run(a, {0, 0, 1}, {dates, ids, 3}, 3, 3), array.data() + nums + 1);
  EXPECT_EQ(pinned_run(a, {0, 0, 1}, {dates, ids, 3}, 2, 2), nullptr) << "crosses a row's edge";
  ArrayRef strided = a;
  strided.shape = {dates, ids, 2};
  strided.strides = {ids * nums, nums, 2};
  EXPECT_EQ(pinned_run(strided, {0, 0, 0}, {dates, ids, 2}, 0, 2), nullptr) << "elements 2 apart";
  EXPECT_EQ(pinned_run(strided, {0, 0, 0}, {dates, ids, 2}, 1, 1), array.data() + 2) << "one element";
  ArrayRef single = a;
  single.type = ElementType::f32;
  EXPECT_EQ(pinned_run(single, {0, 0, 0}, whole, 0, 10), nullptr) << "float32 is widened, never copied as is";
}

TEST(MemoryInput, CopyBoxMatchesAPlainLoopForEveryContiguity) {
  const std::int64_t dates = 4, ids = 300007, nums = 3;
  std::vector<double> array(static_cast<std::size_t>(dates * ids * nums));
  for (std::size_t e = 0; e < array.size(); ++e) array[e] = 1.0 + static_cast<double>(e % 4099) / 3.0;
  ArrayRef a{array.data(), ElementType::f64, 3, {dates, ids, nums}, {ids * nums, nums, 1}, "disc"};
  struct Box {
    std::array<std::int64_t, 3> start, count;
    const char* what;
  };
  for (const Box& box :
       {Box{{0, 0, 0}, {dates, ids, nums}, "whole array: one run"}, Box{{1, 0, 0}, {2, ids, nums}, "whole planes"},
        Box{{0, 5, 0}, {3, ids - 9, nums}, "rows within each plane"},
        Box{{1, 2, 1}, {3, ids - 4, 2}, "part of each row"}}) {
    const std::int64_t n = box.count[0] * box.count[1] * box.count[2];
    std::vector<double> packed(static_cast<std::size_t>(n), std::nan(""));
    copy_box(a, box.start, box.count, packed.data(), false);
    std::int64_t wrong = 0, e = 0;
    for (std::int64_t x = 0; x < box.count[0]; ++x)
      for (std::int64_t y = 0; y < box.count[1]; ++y)
        for (std::int64_t z = 0; z < box.count[2]; ++z, ++e)
          wrong +=
              packed[static_cast<std::size_t>(e)] !=
              array[static_cast<std::size_t>(((box.start[0] + x) * ids + box.start[1] + y) * nums + box.start[2] + z)];
    EXPECT_EQ(wrong, 0) << box.what << ": read";
    // Ranges of the packed box at odd edges (mid-row, mid-plane), read and
    // written back by copy_box_range, as memory.staging: none's pieces are.
    {
      std::vector<double> ranged(static_cast<std::size_t>(n), std::nan(""));
      for (std::int64_t first = 0, step = 1; first < n; first += step, step = step * 3 + 7)
        copy_box_range(a, box.start, box.count, first, std::min(step, n - first), ranged.data() + first, false);
      EXPECT_EQ(ranged, packed) << box.what << ": read by ranges";
      std::vector<double> back(array.size(), -7.0);
      ArrayRef b = a;
      b.data = back.data();
      for (std::int64_t first = 0, step = 5; first < n; first += step, step = step * 2 + 3)
        copy_box_range(b, box.start, box.count, first, std::min(step, n - first), ranged.data() + first, true);
      std::vector<double> whole(array.size(), -7.0);
      ArrayRef c = a;
      c.data = whole.data();
      copy_box(c, box.start, box.count, packed.data(), true);
      EXPECT_EQ(back, whole) << box.what << ": written by ranges";
    }
    std::vector<double> out(array.size(), -7.0);
    ArrayRef o = a;
    o.data = out.data();
    for (auto& v : packed) v = -v;
    copy_box(o, box.start, box.count, packed.data(), true);
    wrong = 0;
    std::int64_t outside = 0;
    for (std::int64_t x = 0; x < dates; ++x)
      for (std::int64_t y = 0; y < ids; ++y)
        for (std::int64_t z = 0; z < nums; ++z) {
          const double got = out[static_cast<std::size_t>((x * ids + y) * nums + z)];
          const bool inside = x >= box.start[0] && x < box.start[0] + box.count[0] && y >= box.start[1] &&
                              y < box.start[1] + box.count[1] && z >= box.start[2] && z < box.start[2] + box.count[2];
          if (inside)
            wrong += got != -array[static_cast<std::size_t>((x * ids + y) * nums + z)];
          else
            outside += got != -7.0;
        }
    EXPECT_EQ(wrong, 0) << box.what << ": write";
    EXPECT_EQ(outside, 0) << box.what << ": wrote outside the box";
  }
}
