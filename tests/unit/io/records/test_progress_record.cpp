// ProgressRecord (io/records/progress_record.hpp): ranges written in any
// order and of odd sizes are recorded durably at a checkpoint, data first;
// a missing unit is found; slots dropped stay empty on disk; ranks share
// the empty slots without collisions; a full record is refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "io/posix/posix_io.hpp"
#include "io/records/progress_record.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using TempDir = discount::test_support::TempDir;

namespace {

// A plain file holding only a record: `capacity` zeroed slots (empty) at
// byte 4096, the input's identity after them.
RecordLayout make_record_file(const std::string& path, std::size_t capacity) {
  RecordLayout layout;
  layout.ranges_offset = 4096;
  layout.file_id_offset = 4096 + capacity * kEntryBytes;
  layout.capacity = capacity;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  EXPECT_GE(fd.get(), 0);
  EXPECT_EQ(::ftruncate(fd.get(), static_cast<off_t>(layout.file_id_offset + kEntryBytes)), 0);
  return layout;
}

OutputSpec spec_of(std::int64_t dates, double checkpoint_seconds) {
  OutputSpec spec;
  spec.path = "unused.h5";
  spec.dates = dates;
  spec.ids = 5;
  spec.nums = 3;
  spec.chunk_axis = Axis::date;
  spec.checkpoint_seconds = checkpoint_seconds;
  return spec;
}

RangeTable on_disk(const std::string& path, const RecordLayout& layout) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  return read_table(fd.get(), layout, path);
}

// Units [0, n) cut at random into ranges of 1 to 9 units, shuffled.
std::vector<DoneRange> random_ranges(std::int64_t n, std::mt19937& rng) {
  std::vector<DoneRange> ranges;
  for (std::int64_t b = 0; b < n;) {
    const std::int64_t e = std::min(n, b + 1 + static_cast<std::int64_t>(rng() % 9));
    DoneRange r;
    r.begin = b;
    r.end = e;
    r.run = 1;
    r.out_sum = rng();
    ranges.push_back(r);
    b = e;
  }
  std::shuffle(ranges.begin(), ranges.end(), rng);
  return ranges;
}

}  // namespace

TEST(ProgressRecord, RandomRangesAreRecordedAtTheCheckpointDataFirst) {
  TempDir dir;
  const std::string path = dir / "record.bin";
  std::mt19937 rng(12345);
  const std::int64_t units = 157;               // odd, prime
  const OutputSpec spec = spec_of(units, 1e9);  // checkpoints only when asked
  ProgressRecord record(spec, path);
  record.layout() = make_record_file(path, 211);
  record.start_empty(211);
  record.open();
  record.share_free_slots();
  int synced = 0, after = 0;
  bool data_first = true;
  record.set_hooks(
      [&] {
        ++synced;
        data_first = data_first && on_disk(path, record.layout()).units_covered() < units;
      },
      [&] { ++after; });
  for (const DoneRange& r : random_ranges(units, rng)) record.add(r);
  EXPECT_EQ(on_disk(path, record.layout()).units_covered(), 0);  // nothing before the checkpoint
  EXPECT_EQ(record.units_done(), 0);
  EXPECT_THROW(record.check_all_done(), Error);
  record.checkpoint();
  EXPECT_EQ(synced, 1);
  EXPECT_EQ(after, 1);
  EXPECT_TRUE(data_first);
  const RangeTable table = on_disk(path, record.layout());
  EXPECT_TRUE(table.covers(0, units));
  EXPECT_EQ(table.units_covered(), units);
  EXPECT_EQ(record.units_done(), units);
  EXPECT_TRUE(record.covers(0, units));
  EXPECT_NO_THROW(record.check_all_done());
  record.checkpoint();  // nothing queued: no hooks
  EXPECT_EQ(synced, 1);
  EXPECT_TRUE(record.sync_and_close());
  EXPECT_FALSE(record.sync_and_close());
}

TEST(ProgressRecord, AMissingUnitIsFoundAndZeroSecondsRecordsEachRangeAtOnce) {
  TempDir dir;
  const std::string path = dir / "record.bin";
  std::mt19937 rng(7);
  const std::int64_t units = 61;
  const OutputSpec spec = spec_of(units, 0);
  ProgressRecord record(spec, path);
  record.layout() = make_record_file(path, 128);
  record.start_empty(128);
  record.open();
  record.share_free_slots();
  auto ranges = random_ranges(units, rng);
  const DoneRange left_out = ranges[static_cast<std::size_t>(rng() % ranges.size())];
  for (const DoneRange& r : ranges) {
    if (r == left_out) continue;
    record.add(r);
    EXPECT_TRUE(on_disk(path, record.layout()).covers(r.begin, r.end));  // at once
  }
  EXPECT_FALSE(record.covers(left_out.begin, left_out.end));
  EXPECT_EQ(record.units_done(), units - (left_out.end - left_out.begin));
  try {
    record.check_all_done();
    FAIL() << "a missing range passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(left_out.end - left_out.begin) + " date(s)"), std::string::npos)
        << e.what();
  }
}

TEST(ProgressRecord, DroppedSlotsStayEmptyAndRangesPastTheAxisAreDropped) {
  TempDir dir;
  const std::string path = dir / "record.bin";
  const RecordLayout layout = make_record_file(path, 64);
  {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    DoneRange a{0, 10, 1, 0, 11, 0, 0}, b{10, 23, 1, 0, 12, 0, 0}, past{23, 40, 1, 0, 13, 0, 0};
    write_slot(fd.get(), layout, 3, a, path);
    write_slot(fd.get(), layout, 9, b, path);
    write_slot(fd.get(), layout, 17, past, path);
  }
  const OutputSpec spec = spec_of(30, 0);  // units [23, 40) lie past the 30 dates
  ProgressRecord record(spec, path);
  record.layout() = layout;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  record.load(fd.get());
  EXPECT_EQ(record.units_done(), 23);
  EXPECT_FALSE(on_disk(path, layout).slots()[17].has_value());
  record.drop_slots(fd.get(), {9});
  EXPECT_EQ(record.units_done(), 10);
  const RangeTable table = on_disk(path, layout);
  EXPECT_TRUE(table.slots()[3].has_value());
  EXPECT_FALSE(table.slots()[9].has_value());
  EXPECT_EQ(table.units_covered(), 10);
}

TEST(ProgressRecord, RanksShareTheEmptySlotsWithoutCollisions) {
  TempDir dir;
  const std::string path = dir / "record.bin";
  std::mt19937 rng(99);
  const std::int64_t units = 101;
  const RecordLayout layout = make_record_file(path, 77);
  std::vector<OutputSpec> specs(3, spec_of(units, 1e9));
  std::vector<std::unique_ptr<ProgressRecord>> ranks;
  for (int r = 0; r < 3; ++r) {
    specs[static_cast<std::size_t>(r)].rank = r;
    specs[static_cast<std::size_t>(r)].ranks = 3;
    ranks.push_back(std::make_unique<ProgressRecord>(specs[static_cast<std::size_t>(r)], path));
    ranks.back()->layout() = layout;
    ranks.back()->start_empty(77);
    ranks.back()->open();
    ranks.back()->share_free_slots();
  }
  const auto ranges = random_ranges(units, rng);
  for (std::size_t j = 0; j < ranges.size(); ++j) ranks[j % 3]->add(ranges[j]);
  for (auto& r : ranks) r->checkpoint();
  EXPECT_TRUE(on_disk(path, layout).covers(0, units));  // no rank overwrote another's slot
  EXPECT_EQ(on_disk(path, layout).units_covered(), units);
}

TEST(ProgressRecord, AFullRecordIsRefusedAndTheRoomCheckSaysSo) {
  TempDir dir;
  const std::string path = dir / "record.bin";
  const OutputSpec spec = spec_of(1000, 1e9);
  ProgressRecord record(spec, path);
  record.layout() = make_record_file(path, 8);
  record.start_empty(8);
  record.open();
  record.share_free_slots();
  EXPECT_NO_THROW(record.check_room());
  // Ten ranges with gaps: none merges with another, and 8 slots hold 8.
  for (std::int64_t j = 0; j < 10; ++j) record.add(DoneRange{j * 10, j * 10 + 3, 1, 0, 1, 0, 0});
  EXPECT_THROW(record.checkpoint(), Error);
}
