#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "io/input/finite.hpp"
#include "io/input/synthetic.hpp"
#include "io/posix/box.hpp"
#include "kernels/piece_multiply.hpp"
#include "kernels/slicing.hpp"

using namespace discount;

namespace {

// A random box in a random array of extents 1..most: {dims, start, count}.
std::array<std::array<std::int64_t, 3>, 3> random_box(std::mt19937& rng, unsigned most) {
  std::array<std::int64_t, 3> dims{}, start{}, count{};
  for (int j = 0; j < 3; ++j) {
    dims[j] = 1 + rng() % most;
    start[j] = rng() % dims[j];
    count[j] = 1 + rng() % (dims[j] - start[j]);
  }
  return {dims, start, count};
}

}  // namespace

// Runs must cover exactly the box's elements, in the buffer's row-major order.
TEST(BoxRuns, MatchAPlainLoop) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const auto [dims, start, count] = random_box(rng, 6);
    std::vector<std::int64_t> expected, got;
    for (std::int64_t a = 0; a < count[0]; ++a)
      for (std::int64_t b = 0; b < count[1]; ++b)
        for (std::int64_t c = 0; c < count[2]; ++c)
          expected.push_back(((start[0] + a) * dims[1] + start[1] + b) * dims[2] + start[2] + c);
    for (const discount::Run& run : box_runs(dims, start, count))
      for (std::int64_t e = 0; e < run.length; ++e) got.push_back(run.offset + e);
    ASSERT_EQ(got, expected);
  }
}

TEST(BoxRuns, FullRowsMergeIntoOneRun) {
  auto runs = box_runs({200, 1000, 5}, {10, 0, 0}, {7, 1000, 5});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].offset, 10 * 5000);
  EXPECT_EQ(runs[0].length, 7 * 5000);
  EXPECT_EQ(box_runs({200, 1000, 5}, {0, 10, 0}, {200, 30, 5}).size(), 200u);
}

// Any range of the packed buffer maps to the same elements box_runs lists at
// those positions, and no run is longer than it need be.
TEST(BoxRuns, RangeRunsMatchTheWholeListsElements) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const auto [dims, start, count] = random_box(rng, 7);
    std::vector<std::int64_t> whole;
    for (const discount::Run& run : box_runs(dims, start, count))
      for (std::int64_t e = 0; e < run.length; ++e) whole.push_back(run.offset + e);
    const auto n = static_cast<std::int64_t>(whole.size());
    const std::int64_t begin = rng() % n, end = begin + 1 + rng() % (n - begin);
    std::vector<std::int64_t> got;
    std::int64_t total = 0;
    for (const discount::Run& run : box_range_runs(dims, start, count, begin, end)) {
      ASSERT_GT(run.length, 0);
      total += run.length;
      for (std::int64_t e = 0; e < run.length; ++e) got.push_back(run.offset + e);
    }
    ASSERT_EQ(total, end - begin);
    ASSERT_EQ(got, std::vector<std::int64_t>(whole.begin() + begin, whole.begin() + end));
  }
  EXPECT_TRUE(box_range_runs({4, 4, 4}, {0, 0, 0}, {4, 4, 4}, 5, 5).empty());
  // A [date][id][num] date slab is one run; an id slab one run per date.
  EXPECT_EQ(box_range_runs({200, 1000, 5}, {10, 0, 0}, {7, 1000, 5}, 100, 30000).size(), 1u);
  const auto per_date = box_range_runs({200, 1000, 5}, {0, 10, 0}, {200, 30, 5}, 140, 310);
  ASSERT_EQ(per_date.size(), 3u);  // the end of date 0's run, all of date 1's, the start of date 2's
  EXPECT_EQ(per_date[0].offset, 50 + 140);
  EXPECT_EQ(per_date[0].length, 10);
  EXPECT_EQ(per_date[1].offset, 5000 + 50);
  EXPECT_EQ(per_date[1].length, 150);
  EXPECT_EQ(per_date[2].offset, 10000 + 50);
  EXPECT_EQ(per_date[2].length, 10);
}

TEST(Finite, FindsTheFirstBadValue) {
  std::vector<double> data(300000, 1.25);
  EXPECT_EQ(find_nonfinite(data.data(), static_cast<std::int64_t>(data.size())), -1);
  data[250001] = std::numeric_limits<double>::infinity();
  data[123457] = std::nan("");
  data[200000] = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(find_nonfinite(data.data(), static_cast<std::int64_t>(data.size())), 123457);
  data[123457] = 1.0;
  EXPECT_EQ(find_nonfinite(data.data(), static_cast<std::int64_t>(data.size())), 200000);
  const double big = std::numeric_limits<double>::max();
  EXPECT_EQ(find_nonfinite(&big, 1), -1);
}

TEST(Synthetic, ValuesAreNonZeroInRangeAndDistinctPerStream) {
  const auto mk = synthetic::key(1, synthetic::multiplier), dk = synthetic::key(1, synthetic::discount);
  EXPECT_NE(mk, dk);
  EXPECT_NE(synthetic::key(2, synthetic::discount), dk);
  int equal = 0;
  for (std::uint64_t n = 0; n < 10000; ++n) {
    const double m = synthetic::value(mk, n), d = synthetic::value(dk, n);
    ASSERT_GE(m, 0.5);
    ASSERT_LT(m, 1.5);
    ASSERT_GE(d, 0.5);
    equal += m == d;
  }
  EXPECT_EQ(equal, 0);
  // Pinned values: the formula is a documented contract (lib/io/input/synthetic.hpp).
  EXPECT_EQ(synthetic::mix(0), 0xE220A8397B1DCDAFull);
}
