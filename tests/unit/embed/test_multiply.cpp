// multiply() on host arrays (lib/embed): out = mult * disc broadcast over
// dates, on odd shapes with random non-zero values, in each axes order the
// direct path and the pipeline take, against a plain loop, bit for bit.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "embed/embed.hpp"
#include "embed/multiply_direct.hpp"
#include "support/kokkos_env.hpp"

using namespace discount;
using embed::MultiplyRequest;

namespace {

// A C-contiguous float64 array of the given shape.
ArrayRef array_of(std::vector<double>& values, std::array<std::int64_t, 3> shape, int rank, const char* name) {
  ArrayRef a;
  a.data = values.data();
  a.rank = rank;
  a.shape = shape;
  std::int64_t stride = 1;
  for (int j = rank - 1; j >= 0; --j) {
    a.strides[static_cast<std::size_t>(j)] = stride;
    stride *= shape[static_cast<std::size_t>(j)];
  }
  a.name = name;
  return a;
}

std::vector<double> random_values(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> magnitude(0.25, 4.0);
  std::vector<double> values(n);
  for (auto& v : values) v = magnitude(rng) * (rng() % 2 ? 1.0 : -1.0);
  return values;
}

// The expected product with a plain loop: disc in the order `axes` names,
// mult [ids][nums].
std::vector<double> plain_loop(const std::vector<double>& mult, const std::vector<double>& disc,
                               std::array<Axis, 3> axes, std::array<std::int64_t, 3> shape, std::int64_t nums) {
  std::vector<double> out(disc.size());
  std::array<std::int64_t, 3> at{};
  for (at[0] = 0; at[0] < shape[0]; ++at[0])
    for (at[1] = 0; at[1] < shape[1]; ++at[1])
      for (at[2] = 0; at[2] < shape[2]; ++at[2]) {
        std::int64_t id = 0, num = 0;
        for (std::size_t j = 0; j < 3; ++j) {
          if (axes[j] == Axis::id) id = at[j];
          if (axes[j] == Axis::num) num = at[j];
        }
        const auto e = static_cast<std::size_t>((at[0] * shape[1] + at[1]) * shape[2] + at[2]);
        out[e] = mult[static_cast<std::size_t>(id * nums + num)] * disc[e];
      }
  return out;
}

std::array<std::int64_t, 3> shape_in(std::array<Axis, 3> axes, std::int64_t dates, std::int64_t ids,
                                     std::int64_t nums) {
  std::array<std::int64_t, 3> shape{};
  for (std::size_t j = 0; j < 3; ++j) shape[j] = axes[j] == Axis::date ? dates : axes[j] == Axis::id ? ids : nums;
  return shape;
}

}  // namespace

TEST(Multiply, HostArraysMatchAPlainLoopInEveryAxesOrder) {
  const std::int64_t dates = 9, ids = 211, nums = 3;
  const std::array<std::array<Axis, 3>, 3> orders{
      {{Axis::date, Axis::id, Axis::num}, {Axis::id, Axis::date, Axis::num}, {Axis::date, Axis::num, Axis::id}}};
  std::mt19937_64 rng(2024);
  for (const auto& axes : orders)
    for (Space space : {Space::host, Space::device}) {
      const auto shape = shape_in(axes, dates, ids, nums);
      auto mult = random_values(static_cast<std::size_t>(ids * nums), rng);
      auto disc = random_values(static_cast<std::size_t>(dates * ids * nums), rng);
      std::vector<double> out(disc.size(), std::numeric_limits<double>::quiet_NaN());  // unwritten shows
      MultiplyRequest request;
      request.mult = array_of(mult, {ids, nums, 0}, 2, "mult");
      request.disc = array_of(disc, shape, 3, "disc");
      request.out = array_of(out, shape, 3, "out");
      request.axes = axes;
      request.space = space;
      const RunReport report = embed::multiply(request, nullptr, {});
      EXPECT_GE(report.slabs_run, 1);
      const auto expected = plain_loop(mult, disc, axes, shape, nums);
      std::size_t wrong = 0;
      for (std::size_t e = 0; e < out.size(); ++e) wrong += out[e] != expected[e];
      EXPECT_EQ(wrong, 0u) << "axes " << static_cast<int>(axes[0]) << static_cast<int>(axes[1])
                           << static_cast<int>(axes[2]) << ", space " << static_cast<int>(space);
    }
}

// out may be disc itself: each element is read before it is overwritten.
TEST(Multiply, InPlaceOnDiscMatchesAPlainLoop) {
  const std::int64_t dates = 5, ids = 1001, nums = 7;
  const std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};
  std::mt19937_64 rng(31);
  auto mult = random_values(static_cast<std::size_t>(ids * nums), rng);
  auto disc = random_values(static_cast<std::size_t>(dates * ids * nums), rng);
  const auto expected = plain_loop(mult, disc, axes, {dates, ids, nums}, nums);
  MultiplyRequest request;
  request.mult = array_of(mult, {ids, nums, 0}, 2, "mult");
  request.disc = array_of(disc, {dates, ids, nums}, 3, "disc");
  request.out = array_of(disc, {dates, ids, nums}, 3, "out");
  request.space = Space::host;
  embed::multiply(request, nullptr, {});
  EXPECT_EQ(disc, expected);
}

// The direct path's slabs cut the outermost axis into consecutive ranges that
// cover it once: the plan's slab extent when the caller gave a budget, else
// few and large (one for arrays this small).
TEST(MultiplyDirect, SlabsCoverTheOutermostAxisOnce) {
  const std::int64_t dates = 13, ids = 97, nums = 5, extent = 4;
  std::vector<double> mult(static_cast<std::size_t>(ids * nums), 1.0);
  std::vector<double> disc(static_cast<std::size_t>(dates * ids * nums), 2.0), out(disc.size());
  for (const auto& axes :
       {std::array<Axis, 3>{Axis::date, Axis::id, Axis::num}, std::array<Axis, 3>{Axis::id, Axis::date, Axis::num}})
    for (bool budget : {false, true}) {
      // A budget only caps: half of it holds a slab's disc + out, here `extent` of the outermost axis.
      const auto shape = shape_in(axes, dates, ids, nums);
      const auto unit = static_cast<std::uint64_t>(shape[1] * shape[2]) * sizeof(double);
      MultiplyRequest request;
      request.mult = array_of(mult, {ids, nums, 0}, 2, "mult");
      request.disc = array_of(disc, shape, 3, "disc");
      request.out = array_of(out, shape, 3, "out");
      request.axes = axes;
      request.space = Space::host;
      if (budget) request.host_budget = parse_memory_size("1GiB");
      Plan plan;
      plan.request.dates = dates;
      plan.request.ids = ids;
      plan.request.nums = nums;
      plan.request.chunk_axis = axes[0];
      plan.request.host_budget = 2 * extent * unit + unit / 2;
      plan.slab_extent = 1;  // the pipeline's slabs: the direct path does not take them
      const auto slabs = embed::direct_slabs(request, plan);
      std::int64_t next = 0;
      for (const Slab& slab : slabs) {
        const Range along = axes[0] == Axis::date ? slab.dates : slab.ids;
        const Range across = axes[0] == Axis::date ? slab.ids : slab.dates;
        EXPECT_EQ(along.begin, next);
        EXPECT_GT(along.size(), 0);
        EXPECT_LE(along.size(), budget ? extent : shape[0]);
        EXPECT_EQ(across.size(), axes[0] == Axis::date ? ids : dates);
        EXPECT_EQ(slab.nums, nums);
        next = along.end;
      }
      EXPECT_EQ(next, shape[0]);
      EXPECT_EQ(slabs.size(), budget ? static_cast<std::size_t>((shape[0] + extent - 1) / extent) : 1u);
    }
}

// A budget larger than the arrays changes nothing: one slab, as without one.
TEST(MultiplyDirect, BudgetLargerThanTheArraysOneSlab) {
  const std::int64_t dates = 13, ids = 97, nums = 5;
  std::vector<double> mult(static_cast<std::size_t>(ids * nums), 1.0);
  std::vector<double> disc(static_cast<std::size_t>(dates * ids * nums), 2.0), out(disc.size());
  MultiplyRequest request;
  request.mult = array_of(mult, {ids, nums, 0}, 2, "mult");
  request.disc = array_of(disc, {dates, ids, nums}, 3, "disc");
  request.out = array_of(out, {dates, ids, nums}, 3, "out");
  request.space = Space::host;
  request.host_budget = parse_memory_size("2GiB");
  Plan plan;
  plan.request.dates = dates;
  plan.request.ids = ids;
  plan.request.nums = nums;
  plan.request.chunk_axis = Axis::date;
  plan.request.host_budget = std::uint64_t{2} << 30;
  plan.slab_extent = 1;  // what the pipeline would cut
  EXPECT_EQ(embed::direct_slabs(request, plan).size(), 1u);
}
