// The positional checksums (io/records/checksum.hpp) against plain loops.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "io/records/checksum.hpp"
#include "io/records/unit_record.hpp"

using namespace discount;

TEST(Checksum, SumsDoNotDependOnPiecesAndSeeEveryChange) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  const std::array<std::int64_t, 3> dims{7, 13, 5};
  std::vector<double> all(7 * 13 * 5);
  for (auto& v : all) v = value(rng);
  const std::uint64_t whole = box_sum(all.data(), dims, {0, 0, 0}, dims, SumKey::output);
  EXPECT_EQ(whole, run_sum(all.data(), static_cast<std::int64_t>(all.size()), 0, SumKey::output));
  // Any split along the first axis, boxes packed as the writer packs them.
  std::uint64_t pieces = 0;
  for (std::int64_t a = 0; a < 7; a += 3) {
    const std::int64_t n = std::min<std::int64_t>(3, 7 - a);
    pieces += box_sum(all.data() + a * 13 * 5, dims, {a, 0, 0}, {n, 13, 5}, SumKey::output);
  }
  EXPECT_EQ(pieces, whole);
  // A split along the middle axis (id slabs of a [date, id, num] file).
  std::uint64_t columns = 0;
  for (std::int64_t b = 0; b < 13; b += 4) {
    const std::int64_t n = std::min<std::int64_t>(4, 13 - b);
    std::vector<double> packed;
    for (std::int64_t a = 0; a < 7; ++a)
      for (std::int64_t j = b; j < b + n; ++j)
        for (std::int64_t k = 0; k < 5; ++k) packed.push_back(all[static_cast<std::size_t>((a * 13 + j) * 5 + k)]);
    columns += box_sum(packed.data(), dims, {0, b, 0}, {7, n, 5}, SumKey::output);
  }
  EXPECT_EQ(columns, whole);
  // One bit anywhere, or two values swapped, changes the sum; so does another key.
  for (std::size_t j = 0; j < all.size(); j += 37) {
    std::vector<double> bad = all;
    std::uint64_t bits;
    std::memcpy(&bits, &bad[j], 8);
    bits ^= std::uint64_t{1} << (j % 64);
    std::memcpy(&bad[j], &bits, 8);
    EXPECT_NE(box_sum(bad.data(), dims, {0, 0, 0}, dims, SumKey::output), whole) << j;
  }
  std::vector<double> swapped = all;
  std::swap(swapped[3], swapped[40]);
  EXPECT_NE(box_sum(swapped.data(), dims, {0, 0, 0}, dims, SumKey::output), whole);
  EXPECT_NE(box_sum(all.data(), dims, {0, 0, 0}, dims, SumKey::discount), whole);
}

// The reader's non-finite scan rides on the input checksum's pass: the sum is
// the same with or without the scan, and the flag sees NaN and both
// infinities wherever they are (first, last, in the tail after the 4-wide
// body) and nothing in finite data, the largest finite value included.
TEST(Checksum, OnePassAlsoFlagsNonFiniteValues) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> value(-1e300, 1e300);
  std::vector<double> data(103);
  for (auto& v : data) v = value(rng);
  data[50] = std::numeric_limits<double>::max();
  data[51] = -std::numeric_limits<double>::max();
  data[52] = std::numeric_limits<double>::denorm_min();
  const auto n = static_cast<std::int64_t>(data.size());
  bool flagged = true;
  const std::uint64_t plain = run_sum(data.data(), n, 9, SumKey::discount);
  EXPECT_EQ(run_sum(data.data(), n, 9, SumKey::discount, &flagged), plain);
  EXPECT_FALSE(flagged);
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    for (std::size_t at : {std::size_t{0}, std::size_t{50}, std::size_t{101}, data.size() - 1}) {
      std::vector<double> copy = data;
      copy[at] = bad;
      flagged = false;
      EXPECT_EQ(run_sum(copy.data(), n, 9, SumKey::discount, &flagged), run_sum(copy.data(), n, 9, SumKey::discount));
      EXPECT_TRUE(flagged) << "value " << bad << " at " << at;
      // The box form passes the flag through, row by row.
      const std::array<std::int64_t, 3> dims{1, 1, n};
      flagged = false;
      box_piece_sum(copy.data(), dims, {0, 0, 0}, dims, 0, n, SumKey::discount, &flagged);
      EXPECT_TRUE(flagged);
    }
}

// The sums are stored in every partial's progress record, so their values
// must not change between releases: a box checked against a plain loop over
// its elements (each element's term from its index in the array) and against
// the values the release before the AVX-512 clones gave (pinned below), for
// float64 and float32 and for a box whose rows join into one stretch.
TEST(Checksum, ValuesMatchAPlainLoopAndTheEarlierRelease) {
  const std::array<std::int64_t, 3> dims{3, 7, 5}, start{1, 2, 0}, count{2, 4, 5};
  std::vector<double> values(40);
  std::vector<float> narrow(40);
  for (std::size_t e = 0; e < values.size(); ++e) {
    values[e] = 0.5 + 0.25 * static_cast<double>(e);
    narrow[e] = static_cast<float>(values[e]);
  }
  std::uint64_t plain = 0;
  std::size_t e = 0;
  for (std::int64_t a = 0; a < count[0]; ++a)
    for (std::int64_t b = 0; b < count[1]; ++b)
      for (std::int64_t c = 0; c < count[2]; ++c, ++e) {
        const auto index = static_cast<std::uint64_t>(((start[0] + a) * dims[1] + start[1] + b) * dims[2] + c);
        std::uint64_t bits;
        std::memcpy(&bits, &values[e], sizeof bits);
        plain += element_term(bits, index * kIndexStep + static_cast<std::uint64_t>(SumKey::output));
      }
  EXPECT_EQ(box_sum(values.data(), dims, start, count, SumKey::output), plain);
  EXPECT_EQ(plain, 14332414132072958069ull);
  EXPECT_EQ(box_sum(narrow.data(), dims, start, count, SumKey::output), 14332414132072958069ull);
  EXPECT_EQ(box_sum(values.data(), dims, {0, 0, 0}, {1, 7, 5}, SumKey::discount), 10423282573888071901ull);
  // Any piece boundaries inside the joined stretch give the same total.
  std::uint64_t pieces = 0;
  for (std::int64_t b = 0; b < 35; b += 6)
    pieces += box_piece_sum(values.data() + b, dims, {0, 0, 0}, {1, 7, 5}, b, std::min<std::int64_t>(35, b + 6),
                            SumKey::discount);
  EXPECT_EQ(pieces, 10423282573888071901ull);
}
