// The slicing's axis positions and the per-piece multiply (kernels/piece_multiply.hpp)
// against a plain loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "io/input/finite.hpp"
#include "io/input/synthetic.hpp"
#include "io/posix/box.hpp"
#include "kernels/piece_multiply.hpp"
#include "kernels/slicing.hpp"

using namespace discount;

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

// compute.kernel: fused. Pieces of any size, in any order, multiplied where
// they lie, give the plain loop's product bit for bit, for every axis order,
// merged or not.
TEST(PieceMultiply, MatchesAPlainLoopForEveryAxisOrder) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> value(0.5, 2.0);
  const std::array<std::array<Axis, 3>, 6> orders{{{Axis::date, Axis::id, Axis::num},
                                                   {Axis::date, Axis::num, Axis::id},
                                                   {Axis::id, Axis::date, Axis::num},
                                                   {Axis::id, Axis::num, Axis::date},
                                                   {Axis::num, Axis::date, Axis::id},
                                                   {Axis::num, Axis::id, Axis::date}}};
  for (int trial = 0; trial < 300; ++trial) {
    const auto& axes = orders[static_cast<std::size_t>(trial) % orders.size()];
    const std::int64_t dates = 1 + rng() % 7, ids = 1 + rng() % 9, nums = 1 + rng() % 6;
    PieceShape shape;
    for (int j = 0; j < 3; ++j) {
      shape.extent[j] = axes[j] == Axis::date ? dates : axes[j] == Axis::id ? ids : nums;
      shape.mult_stride[j] = axes[j] == Axis::date ? 0 : axes[j] == Axis::id ? nums : 1;
    }
    const std::int64_t n = dates * ids * nums;
    std::vector<double> mult(static_cast<std::size_t>(ids * nums)), disc(static_cast<std::size_t>(n));
    for (auto& m : mult) m = value(rng);
    for (auto& d : disc) d = value(rng);
    std::vector<double> expected(disc.size());
    for (std::int64_t a = 0; a < shape.extent[0]; ++a)
      for (std::int64_t b = 0; b < shape.extent[1]; ++b)
        for (std::int64_t c = 0; c < shape.extent[2]; ++c) {
          const std::int64_t e = (a * shape.extent[1] + b) * shape.extent[2] + c;
          const std::int64_t m = a * shape.mult_stride[0] + b * shape.mult_stride[1] + c * shape.mult_stride[2];
          expected[static_cast<std::size_t>(e)] = mult[static_cast<std::size_t>(m)] * disc[static_cast<std::size_t>(e)];
        }
    for (const PieceShape& s : {shape, merged_piece_shape(shape)}) {
      ASSERT_EQ(s.extent[0] * s.extent[1] * s.extent[2], n);
      // Random cut points, visited in a shuffled order.
      std::vector<std::int64_t> cuts{0, n};
      for (int c = 0; c < 4; ++c) cuts.push_back(static_cast<std::int64_t>(rng() % static_cast<unsigned>(n + 1)));
      std::sort(cuts.begin(), cuts.end());
      std::vector<std::size_t> order(cuts.size() - 1);
      for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<double> data = disc;
      for (std::size_t p : order) multiply_piece(data.data() + cuts[p], mult.data(), s, cuts[p], cuts[p + 1] - cuts[p]);
      ASSERT_EQ(data, expected) << "trial " << trial << " axes " << axis_name(axes[0]) << "," << axis_name(axes[1])
                                << "," << axis_name(axes[2]) << " extents " << dates << "x" << ids << "x" << nums;
    }
  }
}

TEST(PieceMultiply, MergesDimensionsWhoseMultiplierStepsContinue) {
  // [date][id][num], a date slab: one run over id x num per date.
  PieceShape date_first{{4, 1000, 5}, {0, 5, 1}};
  PieceShape m = merged_piece_shape(date_first);
  EXPECT_EQ(m.extent, (std::array<std::int64_t, 3>{1, 4, 5000}));
  EXPECT_EQ(m.mult_stride, (std::array<std::int64_t, 3>{0, 0, 1}));
  // [id][date][num] (the transposed layout): nothing merges, runs of nums.
  PieceShape transposed{{1000, 4, 5}, {5, 0, 1}};
  EXPECT_EQ(merged_piece_shape(transposed).extent, transposed.extent);
  // One date: the date dimension drops out.
  PieceShape one_date{{1, 1000, 5}, {0, 5, 1}};
  EXPECT_EQ(merged_piece_shape(one_date).extent, (std::array<std::int64_t, 3>{1, 1, 5000}));
}
