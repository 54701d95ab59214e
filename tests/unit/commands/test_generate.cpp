// `discount_app generate`: the random values are the documented formula's
// (and the same numbers as before --values existed); the realistic values are
// discount factors exp(-r t) rounded to 8 decimals at a 4-decimal rate per
// (id, num), and multBy amounts in cents, checked here against a computation
// of their own; both depend on the seed alone, never on the axes order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "commands/tools.hpp"
#include "io/input/synthetic.hpp"
#include "support/output_files.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using discount::test_support::read_all;
using discount::test_support::TempDir;

namespace {

struct Generated {
  std::vector<double> mult, disc;  // disc in the file's axes order
};

Generated generate(const TempDir& dir, const std::string& name, std::int64_t dates, std::int64_t ids, std::int64_t nums,
                   std::uint64_t seed, GeneratedValues values,
                   std::vector<Axis> axes = {Axis::date, Axis::id, Axis::num}) {
  GenerateOptions o;
  o.dates = dates;
  o.ids = ids;
  o.nums = nums;
  o.out = dir / name;
  o.seed = seed;
  o.values = values;
  o.axes = axes;
  EXPECT_EQ(generate_command(o), 0);
  return {read_all(o.out, "multBy"), read_all(o.out, "discount")};
}

}  // namespace

// Random is the default, and its values are the formula of io/input/synthetic.hpp
// element for element; two of them pinned as the app wrote them before
// realistic values existed.
TEST(Generate, RandomValuesAreTheDefaultAndUnchanged) {
  EXPECT_EQ(GenerateOptions{}.values, GeneratedValues::random);
  TempDir dir("discount_generate");
  const std::int64_t dates = 3, ids = 5, nums = 2;
  const auto g = generate(dir, "random.h5", dates, ids, nums, 7, GeneratedValues::random);
  ASSERT_EQ(g.mult.size(), std::size_t(ids * nums));
  ASSERT_EQ(g.disc.size(), std::size_t(dates * ids * nums));
  const auto mk = synthetic::key(7, synthetic::multiplier), dk = synthetic::key(7, synthetic::discount);
  for (std::size_t n = 0; n < g.mult.size(); ++n) EXPECT_EQ(g.mult[n], synthetic::value(mk, n)) << n;
  for (std::size_t n = 0; n < g.disc.size(); ++n) EXPECT_EQ(g.disc[n], synthetic::value(dk, n)) << n;
  EXPECT_EQ(g.mult[0], 0x1.1e0645a05fb5dp-1);
  EXPECT_EQ(g.mult[1], 0x1.5835eedc00edap+0);
  EXPECT_EQ(g.disc[0], 0x1.c574d8209e6bap-1);
  EXPECT_EQ(g.disc[29], 0x1.86fbbadda8eebp-1);
}

// Each (id, num)'s rate is read back from its first date (t = 1/12) and must
// be a 4-decimal rate in 0.50%..8.00%; every date's factor is then
// round(exp(-r (d + 1) / 12) * 1e8) / 1e8, computed here. multBy holds cents
// in [1, 1e6], the documented formula's.
TEST(Generate, RealisticValuesFollowTheFormula) {
  TempDir dir("discount_generate");
  const std::int64_t dates = 6, ids = 2003, nums = 2;
  const std::uint64_t seed = 5;
  const auto g = generate(dir, "realistic.h5", dates, ids, nums, seed, GeneratedValues::realistic);
  ASSERT_EQ(g.disc.size(), std::size_t(dates * ids * nums));
  std::set<std::int64_t> rates;
  const auto rate_key = synthetic::key(seed, synthetic::rate);
  for (std::int64_t i = 0; i < ids; ++i)
    for (std::int64_t k = 0; k < nums; ++k) {
      const double first = g.disc[static_cast<std::size_t>(i * nums + k)];
      const double basis = -std::log(first) * 12 * 1e4;  // the rate in units of 0.0001
      const auto q = static_cast<std::int64_t>(std::llround(basis));
      ASSERT_NEAR(basis, double(q), 1e-2) << "id " << i << " num " << k << ": rate not of 4 decimals";
      ASSERT_GE(q, 50);
      ASSERT_LE(q, 800);
      rates.insert(q);
      const double r = double(q) / 1e4;
      EXPECT_EQ(synthetic::curve_rate(rate_key, std::uint64_t(i * nums + k)), r);
      double previous = 1;
      for (std::int64_t d = 0; d < dates; ++d) {
        const double v = g.disc[static_cast<std::size_t>((d * ids + i) * nums + k)];
        const double t = double(d + 1) / 12;
        ASSERT_EQ(v, std::round(std::exp(-r * t) * 1e8) / 1e8) << "date " << d << " id " << i << " num " << k;
        ASSERT_GT(v, 0);
        ASSERT_LT(v, previous) << "date " << d << " id " << i << " num " << k;
        previous = v;
      }
    }
  // 4006 draws of 751 rates: nearly all rates appear, each shared by several (id, num).
  EXPECT_GT(rates.size(), 650u);
  EXPECT_LE(rates.size(), 751u);

  const auto amount_key = synthetic::key(seed, synthetic::amount);
  double smallest = 1e300, largest = 0;
  for (std::size_t n = 0; n < g.mult.size(); ++n) {
    const double m = g.mult[n];
    EXPECT_EQ(m, std::round(m * 100) / 100) << n;  // the double nearest a whole number of cents
    const std::uint64_t h = synthetic::mix(amount_key + n);
    const double s = ((h & 0xFFFF) + ((h >> 16) & 0xFFFF) + ((h >> 32) & 0xFFFF) + (h >> 48) + 2.0) / 65536 - 2;
    EXPECT_EQ(m, std::round(std::pow(10.0, 3 + 1.5 * s) * 100) / 100) << n;
    smallest = std::min(smallest, m);
    largest = std::max(largest, m);
  }
  EXPECT_GE(smallest, 1.0);
  EXPECT_LE(largest, 1e6);
  EXPECT_LT(smallest, 100.0);  // spread over orders of magnitude
  EXPECT_GT(largest, 1e4);
}

// The same seed gives the same numbers whatever the axes order; another seed
// gives other rates and amounts.
TEST(Generate, RealisticValuesDependOnTheSeedAlone) {
  TempDir dir("discount_generate");
  const std::int64_t dates = 4, ids = 101, nums = 3;
  const auto a = generate(dir, "a.h5", dates, ids, nums, 9, GeneratedValues::realistic);
  const auto again = generate(dir, "again.h5", dates, ids, nums, 9, GeneratedValues::realistic);
  EXPECT_EQ(a.mult, again.mult);
  EXPECT_EQ(a.disc, again.disc);

  // [id][date][num] in the file: the same logical values.
  const auto t =
      generate(dir, "t.h5", dates, ids, nums, 9, GeneratedValues::realistic, {Axis::id, Axis::date, Axis::num});
  EXPECT_EQ(t.mult, a.mult);
  for (std::int64_t d = 0; d < dates; ++d)
    for (std::int64_t i = 0; i < ids; ++i)
      for (std::int64_t k = 0; k < nums; ++k)
        ASSERT_EQ(t.disc[static_cast<std::size_t>((i * dates + d) * nums + k)],
                  a.disc[static_cast<std::size_t>((d * ids + i) * nums + k)]);

  const auto b = generate(dir, "b.h5", dates, ids, nums, 10, GeneratedValues::realistic);
  std::size_t same_mult = 0, same_disc = 0;
  for (std::size_t n = 0; n < a.mult.size(); ++n) same_mult += a.mult[n] == b.mult[n];
  for (std::size_t n = 0; n < a.disc.size(); ++n) same_disc += a.disc[n] == b.disc[n];
  EXPECT_LT(same_mult, a.mult.size() / 20);
  EXPECT_LT(same_disc, a.disc.size() / 20);  // two draws of 751 rates agree 1 time in 751

  const auto r = generate(dir, "r.h5", dates, ids, nums, 9, GeneratedValues::random);
  EXPECT_NE(r.disc, a.disc);
}

// Far dates never reach 0: the factor stops at 1e-8 (past 200 years of monthly
// dates at 8%), and never rises.
TEST(Generate, RealisticFactorsStayPositive) {
  double previous = 1;
  for (std::int64_t d = 0; d < 40000; d += 97) {
    const double v = synthetic::discount_factor(0.08, d);
    ASSERT_GE(v, 1e-8) << d;
    ASSERT_LE(v, previous) << d;
    previous = v;
  }
  EXPECT_EQ(synthetic::discount_factor(0.08, 39999), 1e-8);
  EXPECT_EQ(synthetic::discount_factor(0.005, 0), std::round(std::exp(-0.005 / 12) * 1e8) / 1e8);
}
