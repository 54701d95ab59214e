// The done-range record (io/records/unit_record.hpp) and the positional checksums
// (io/records/checksum.hpp): encoding and its self-check, coverage under another slab
// partition, coalescing, and sums that do not depend on how data is split.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "io/records/checksum.hpp"
#include "io/records/unit_record.hpp"

using namespace discount;

namespace {

DoneRange range(std::int64_t b, std::int64_t e, int run = 1, std::uint64_t out = 0, std::uint64_t disc = 0,
                std::uint64_t mult = 0) {
  DoneRange r;
  r.begin = b;
  r.end = e;
  r.run = run;
  r.flags = kHasInputSums;
  r.out_sum = out;
  r.in_disc = disc;
  r.in_mult = mult;
  return r;
}

}  // namespace

TEST(UnitRecord, AnEntryReadsBackOnlyWhenWhole) {
  const DoneRange r = range(3, 17, 4, 0x1122334455667788ull, 0x99, 0xabcdef);
  std::uint8_t raw[kEntryBytes];
  encode_range(r, raw);
  ASSERT_TRUE(decode_range(raw).has_value());
  EXPECT_EQ(*decode_range(raw), r);
  // Any one byte changed, the commit word included, and the entry is empty.
  for (std::size_t b = 0; b < kEntryBytes; ++b) {
    std::uint8_t bad[kEntryBytes];
    std::memcpy(bad, raw, kEntryBytes);
    bad[b] ^= 0x04;
    EXPECT_FALSE(decode_range(bad).has_value()) << "byte " << b;
  }
  // A slot never written (zeros) and a torn write (new head, old tail) are empty.
  std::uint8_t zeros[kEntryBytes] = {};
  EXPECT_FALSE(decode_range(zeros).has_value());
  std::uint8_t torn[kEntryBytes];
  encode_range(range(3, 18), torn);
  std::memcpy(torn + 32, raw + 32, kEntryBytes - 32);
  EXPECT_FALSE(decode_range(torn).has_value());
  // An empty or backwards range is not a range.
  encode_range(range(5, 5), raw);
  EXPECT_FALSE(decode_range(raw).has_value());
}

TEST(UnitRecord, FileIdentityRoundTripsAndNamesWhatChanged) {
  const InputFileId id{64769, 1234567, 1 << 20, 1700000000123456789, 1700000000223456789};
  std::uint8_t raw[kEntryBytes];
  encode_file_id(id, raw);
  ASSERT_TRUE(decode_file_id(raw).has_value());
  EXPECT_EQ(*decode_file_id(raw), id);
  raw[9] ^= 1;
  EXPECT_FALSE(decode_file_id(raw).has_value());
  InputFileId other = id;
  other.ino += 1;
  EXPECT_NE(file_id_change(id, other).find("another file"), std::string::npos);
  other = id;
  other.mtime_ns += 1;
  EXPECT_NE(file_id_change(id, other).find("time stamp"), std::string::npos);
}

TEST(UnitRecord, CoverageAnswersForAnyOtherSlabPartition) {
  RangeTable table(8);
  table.set(0, range(0, 4));
  table.set(3, range(4, 6, 2));  // touches the first: one stretch
  table.set(5, range(9, 12));
  table.set(6, range(10, 11));  // inside another: overlaps are fine
  EXPECT_EQ(table.coverage(), (std::vector<Span>{{0, 6}, {9, 12}}));
  EXPECT_EQ(table.units_covered(), 9);
  EXPECT_EQ(table.valid(), 4u);
  EXPECT_EQ(table.free_slots(), (std::vector<std::size_t>{1, 2, 4, 7}));
  // Slabs of 3 units: [0,3) and [3,6) done; [6,9) not; [9,12) done.
  EXPECT_TRUE(table.covers(0, 3));
  EXPECT_TRUE(table.covers(3, 6));
  EXPECT_FALSE(table.covers(6, 9));
  EXPECT_TRUE(table.covers(9, 12));
  // Slabs of 5: [5,10) is partly covered, so it is computed again whole.
  EXPECT_TRUE(table.covers(0, 5));
  EXPECT_FALSE(table.covers(5, 10));
  EXPECT_FALSE(table.covers(10, 13));
  // A dropped range uncovers its units.
  table.set(3, std::nullopt);
  EXPECT_FALSE(table.covers(3, 6));
  EXPECT_TRUE(table.covers(0, 4));
}

TEST(UnitRecord, CoalescingAddsChecksumsOfAdjacentRangesOfOneRun) {
  // Date chunks: every range uses the whole multBy, so its sum must agree.
  const auto dates =
      coalesce({range(2, 3, 1, 5, 50, 7), range(0, 1, 1, 1, 10, 7), range(1, 2, 1, 2, 20, 7)}, false, 100);
  ASSERT_EQ(dates.size(), 1u);
  EXPECT_EQ(dates[0], range(0, 3, 1, 8, 80, 7));
  // Id chunks: each range brings its own multBy rows, whose sums add.
  const auto ids = coalesce({range(0, 2, 1, 1, 10, 3), range(2, 4, 1, 2, 20, 4)}, true, 100);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0].in_mult, 7u);
  // Not merged: a gap, another run, another multBy for date chunks, or past max_units.
  EXPECT_EQ(coalesce({range(0, 2), range(3, 4)}, false, 100).size(), 2u);
  EXPECT_EQ(coalesce({range(0, 2, 1), range(2, 4, 2)}, false, 100).size(), 2u);
  EXPECT_EQ(coalesce({range(0, 2, 1, 0, 0, 1), range(2, 4, 1, 0, 0, 2)}, false, 100).size(), 2u);
  EXPECT_EQ(coalesce({range(0, 2), range(2, 4), range(4, 6)}, false, 4).size(), 2u);
  EXPECT_FALSE(merged(range(0, 2), range(3, 4), false).has_value());
}

TEST(UnitRecord, CapacityAndEntrySizeDoNotGrowWithUnits) {
  EXPECT_EQ(table_capacity(1), 1024u);
  EXPECT_EQ(table_capacity(1000), 4000u);
  EXPECT_EQ(table_capacity(10'000'000), 65536u);  // 4 MiB of entries at most
  EXPECT_EQ(entry_units(61, 1024), 1);
  EXPECT_EQ(entry_units(std::int64_t{1} << 31, 1024), (std::int64_t{1} << 31) / 256);
  // Any number of units is covered by a quarter of the table.
  for (std::int64_t units : {1LL, 255LL, 257LL, 3000017LL, (1LL << 31) + 17})
    for (std::size_t capacity : {std::size_t{1024}, std::size_t{4000}, std::size_t{65536}})
      EXPECT_LE((units + entry_units(units, capacity) - 1) / entry_units(units, capacity),
                static_cast<std::int64_t>(capacity / 4));
}
