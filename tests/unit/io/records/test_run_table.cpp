// The run table written in place (io/records/run_table.hpp), read back by
// the app and, field by field, by HDF5 itself.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

#include "common/host.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/records/run_table.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using discount::test_support::TempDir;

namespace {

RunRecord record(int run, int ranks, double seconds) {
  RunRecord r;
  r.run = run;
  r.ranks = ranks;
  r.start_time = "2026-12-05T10:00:0" + std::to_string(run % 10) + "Z";
  r.seconds = seconds;
  return r;
}

struct RunAndSeconds {
  int run;
  double seconds;
};

// HDF5's own reading of two of the compound's fields, converted by name.
std::vector<RunAndSeconds> read_by_hdf5(const std::string& path) {
  h5::Id f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id d = h5::dataset(H5Dopen2(f.get(), "discount_app/runs", H5P_DEFAULT));
  EXPECT_TRUE(d);
  if (!d) return {};
  h5::Id type = h5::datatype(H5Tcreate(H5T_COMPOUND, sizeof(RunAndSeconds)));
  H5Tinsert(type.get(), "run", HOFFSET(RunAndSeconds, run), H5T_NATIVE_INT);
  H5Tinsert(type.get(), "seconds", HOFFSET(RunAndSeconds, seconds), H5T_NATIVE_DOUBLE);
  std::vector<RunAndSeconds> rows(static_cast<std::size_t>(h5::dataset_dims(d.get()).at(0)));
  EXPECT_GE(H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0);
  return rows;
}

}  // namespace

TEST(RunTable, RunsWrittenInPlaceReadBackAndPastTheLastSlotShareIt) {
  TempDir dir;
  const std::string path = dir / "out.h5";
  std::uint64_t offset = 0;
  {
    h5::Id f = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    ASSERT_GE(H5Gclose(H5Gcreate2(f.get(), "discount_app", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), 0);
    offset = create_run_table(f.get());
    ASSERT_GT(offset, 0u);
    EXPECT_EQ(run_table_state(f.get()), (std::pair<std::uint64_t, int>{offset, 1}));  // zeroed: no run yet
    EXPECT_TRUE(read_run_records(f.get()).empty());
  }
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  write_run_entry(fd, offset, record(1, 1, 1.5), path);
  write_run_entry(fd, offset, record(2, 4, 0.25), path);
  write_run_entry(fd, offset, record(kRunSlots, 2, 7.0), path);
  write_run_entry(fd, offset, record(kRunSlots + 44, 3, 9.0), path);  // replaces the last slot's
  ::close(fd);

  h5::Id f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  EXPECT_EQ(run_table_state(f.get()), (std::pair<std::uint64_t, int>{offset, kRunSlots + 45}));
  const std::vector<RunRecord> runs = read_run_records(f.get());
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].run, 1);
  EXPECT_EQ(runs[0].ranks, 1);
  EXPECT_EQ(runs[0].seconds, 1.5);
  EXPECT_EQ(runs[0].start_time, "2026-12-05T10:00:01Z");
  EXPECT_EQ(runs[1].run, 2);
  EXPECT_EQ(runs[1].ranks, 4);
  EXPECT_EQ(runs[1].seconds, 0.25);
  EXPECT_EQ(runs[2].run, kRunSlots + 44);
  EXPECT_EQ(runs[2].ranks, 3);
  EXPECT_EQ(runs[2].seconds, 9.0);
  for (const RunRecord& r : runs) {
    EXPECT_TRUE(std::regex_match(r.end_time, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << r.end_time;
    EXPECT_EQ(r.host, host_name().substr(0, 64));
  }
  const std::vector<RunAndSeconds> rows = read_by_hdf5(path);
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(kRunSlots));
  EXPECT_EQ(rows[0].run, 1);
  EXPECT_EQ(rows[1].seconds, 0.25);
  EXPECT_EQ(rows[2].run, 0);  // untouched slots stay zero
  EXPECT_EQ(rows[kRunSlots - 1].run, kRunSlots + 44);
  EXPECT_EQ(rows[kRunSlots - 1].seconds, 9.0);
}

TEST(RunTable, FileWithoutATable) {
  TempDir dir;
  const std::string path = dir / "plain.h5";
  h5::Id f = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  EXPECT_EQ(run_table_state(f.get()), (std::pair<std::uint64_t, int>{0, 1}));
  EXPECT_TRUE(read_run_records(f.get()).empty());
}
