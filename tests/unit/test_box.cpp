#include <gtest/gtest.h>

#include <random>

#include "io/box.hpp"
#include "io/finite.hpp"
#include "io/synthetic.hpp"
#include "kernels/slicing.hpp"

using namespace discount;

// Runs must cover exactly the box's elements, in the buffer's row-major order.
TEST(BoxRuns, MatchAPlainLoop) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::array<std::int64_t, 3> dims{}, start{}, count{};
    for (int j = 0; j < 3; ++j) {
      dims[j] = 1 + rng() % 6;
      start[j] = rng() % dims[j];
      count[j] = 1 + rng() % (dims[j] - start[j]);
    }
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
  // Pinned values: the formula is a documented contract (lib/io/synthetic.hpp).
  EXPECT_EQ(synthetic::mix(0), 0xE220A8397B1DCDAFull);
}

TEST(Slicing, MapsAxisNamesToMemoryPositions) {
  const std::array<Axis, 3> seed_layout{Axis::id, Axis::date, Axis::num};
  Slicing s = make_slicing(seed_layout, {Axis::date}, {32});
  EXPECT_EQ(s.parallel, (std::array<bool, 3>{false, true, false}));
  EXPECT_EQ(s.tile, (std::array<std::int64_t, 3>{0, 32, 0}));
  EXPECT_EQ(s.rank(), 1);
  EXPECT_EQ(s.mask(), 2);
  Slicing all = make_slicing({Axis::date, Axis::id, Axis::num}, {Axis::num, Axis::date, Axis::id}, {5, 1, 64});
  EXPECT_EQ(all.mask(), 7);
  EXPECT_EQ(all.tile, (std::array<std::int64_t, 3>{1, 64, 5}));
  EXPECT_NE(all.describe({Axis::date, Axis::id, Axis::num}).find("date/1 id/64 num/5"), std::string::npos);
}
