// The pieces of output.dtype and of the self-describing output: float32
// packing in place, checksums that do not depend on how a value is stored,
// stage bytes as stored, and attributes read back as written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "io/hdf5/attributes.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/records/checksum.hpp"
#include "io/output/output_coords.hpp"
#include "plan/stages.hpp"

#include "support/temp_dir.hpp"

using namespace discount;

namespace {

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(0.5, 2.0);
  std::uniform_int_distribution<int> exp(-30, 30), sign(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = std::ldexp(mag(rng), exp(rng)) * (sign(rng) ? -1.0 : 1.0);
  return v;
}

}  // namespace

TEST(StoredType, NarrowInPlaceRoundsOnceAndKeepsOrder) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1001}}) {
    const auto values = random_values(n, static_cast<unsigned>(n));
    auto work = values;
    const float* packed = narrow_in_place(work.data(), n);
    ASSERT_EQ(static_cast<const void*>(packed), static_cast<const void*>(work.data()));
    for (std::size_t i = 0; i < n; ++i) {
      const float want = static_cast<float>(values[i]);
      ASSERT_EQ(std::memcmp(&packed[i], &want, sizeof want), 0) << "element " << i << " of " << n;
    }
  }
}

TEST(StoredType, HalfwayCasesRoundToNearestEven) {
  // 1 + 2^-24 lies halfway between two floats: it rounds to even (1.0f);
  // 1 + 3 * 2^-24 rounds up. A rounding through another path would differ.
  std::vector<double> v{1.0 + std::ldexp(1.0, -24), 1.0 + 3 * std::ldexp(1.0, -24)};
  const float* f = narrow_in_place(v.data(), v.size());
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 1.0f + std::ldexp(1.0f, -22));
  EXPECT_EQ(stored_bytes(OutputType::float32), 4u);
  EXPECT_EQ(stored_bytes(OutputType::float64), 8u);
}

TEST(Checksum, FloatAndItsWidenedDoubleSumAlike) {
  const std::array<std::int64_t, 3> dims{5, 7, 3}, start{1, 2, 0}, count{3, 4, 3};
  const auto values = random_values(static_cast<std::size_t>(count[0] * count[1] * count[2]), 3);
  std::vector<float> narrow(values.size());
  std::vector<double> widened(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    narrow[i] = static_cast<float>(values[i]);
    widened[i] = narrow[i];
  }
  const auto f = box_sum(narrow.data(), dims, start, count, SumKey::output);
  EXPECT_EQ(f, box_sum(widened.data(), dims, start, count, SumKey::output));
  EXPECT_NE(f, box_sum(values.data(), dims, start, count, SumKey::output));  // the rounding shows
  narrow[5] = std::nextafter(narrow[5], 0.0f);
  EXPECT_NE(f, box_sum(narrow.data(), dims, start, count, SumKey::output));
}
