// PartSet (io/records/part_set.hpp): a split set of parts of odd sizes
// takes random slabs, also across a part's edge, where a plain HDF5 read of
// each part finds them, and reads them back; the single layout writes at
// the dataset's offset; identities notice a changed part; stale sets of
// this output go, and only they.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/input.hpp"
#include "io/records/output_parts.hpp"
#include "io/records/part_set.hpp"
#include "io/posix/part_record.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using TempDir = discount::test_support::TempDir;

namespace {

OutputSpec split_spec(const std::string& out, std::int64_t dates, std::int64_t ids, std::int64_t nums, int parts) {
  OutputSpec spec;
  spec.path = out;
  spec.dates = dates;
  spec.ids = ids;
  spec.nums = nums;
  spec.chunk_axis = Axis::date;
  spec.layout = OutputLayout::split;
  spec.parts = parts;
  spec.direct_io = false;
  for (std::int64_t d = 0; d < dates; d += 3) spec.slab_units.push_back({d, std::min(dates, d + 3)});
  return spec;
}

std::vector<double> read_part(const std::string& path) {
  h5::Id f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id d = h5::dataset(H5Dopen2(f.get(), kPartDataset, H5P_DEFAULT));
  std::size_t n = 1;
  for (auto e : h5::dataset_dims(d.get())) n *= e;
  std::vector<double> values(n);
  EXPECT_GE(H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  return values;
}

// Writes dates [b, e) of `truth` (the whole output, date-major) through the set.
void write_dates(PartSet& set, const OutputSpec& spec, const std::vector<double>& truth, std::int64_t b,
                 std::int64_t e) {
  const FileBox box = discount_box({spec.dates, spec.ids, spec.nums}, spec.axes, {b, e}, {0, spec.ids});
  const std::int64_t row = spec.ids * spec.nums;
  std::vector<double> slab(truth.begin() + b * row, truth.begin() + e * row);
  set.write(box, b, e, slab.data(), sizeof(double));
}

}  // namespace

TEST(PartSet, RandomSlabsAcrossOddPartsLandWhereEachPartHoldsThem) {
  TempDir dir;
  const std::string out = dir / "out.h5";
  const std::int64_t dates = 29, ids = 7, nums = 3, row = ids * nums;
  const OutputSpec spec = split_spec(out, dates, ids, nums, 4);
  PartSet set(spec, out + ".partial");
  const std::string name = set.create_split(static_cast<std::uint64_t>(dates * row) * sizeof(double));
  ASSERT_TRUE(set.split());
  EXPECT_EQ(set.folder(), dir / name);
  ASSERT_EQ(set.parts(), 4u);
  EXPECT_EQ(set.bounds().front(), 0);
  EXPECT_EQ(set.bounds().back(), dates);
  std::int64_t covered = 0;
  for (std::size_t f = 0; f < set.parts(); ++f) {
    EXPECT_TRUE(fs::exists(set.part_path(f)));
    covered += set.part_dims(f)[0];
    EXPECT_EQ(set.part_dims(f)[1], ids);
    for (std::int64_t u = set.bounds()[f]; u < set.bounds()[f + 1]; ++u) EXPECT_EQ(set.file_of(u), f);
  }
  EXPECT_EQ(covered, dates);
  set.open(0);
  ASSERT_EQ(set.size(), 4u);
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> value(-1e6, 1e6);
  std::vector<double> truth(static_cast<std::size_t>(dates * row));
  for (auto& v : truth) v = value(rng);
  // Random cuts of the dates, unrelated to the part bounds, written in random order.
  std::vector<std::int64_t> cuts{0, dates};
  for (int j = 0; j < 6; ++j) cuts.push_back(1 + static_cast<std::int64_t>(rng() % (dates - 1)));
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<std::size_t> order(cuts.size() - 1);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (auto j : order) write_dates(set, spec, truth, cuts[j], cuts[j + 1]);
  for (std::size_t f = 0; f < set.size(); ++f) EXPECT_TRUE(set.file(f).dirty.load());
  set.sync_dirty();
  for (std::size_t f = 0; f < set.size(); ++f) EXPECT_FALSE(set.file(f).dirty.load());
  for (std::size_t f = 0; f < set.parts(); ++f) {
    const std::int64_t b = set.bounds()[f], e = set.bounds()[f + 1];
    std::vector<double> back(static_cast<std::size_t>((e - b) * row));
    set.read_units({b, e}, back.data());
    const std::vector<double> want(truth.begin() + b * row, truth.begin() + e * row);
    EXPECT_EQ(back, want) << "part " << f;
    EXPECT_EQ(read_part(set.part_path(f)), want) << "part " << f;
  }
  set.sync_and_close();
  EXPECT_EQ(set.size(), 0u);
}

TEST(PartSet, TheSingleLayoutWritesAtTheDatasetsOffset) {
  TempDir dir;
  const std::string master = dir / "out.h5.partial";
  const std::int64_t dates = 11, ids = 5, nums = 2, row = ids * nums;
  OutputSpec spec = split_spec(dir / "out.h5", dates, ids, nums, 1);
  spec.layout = OutputLayout::single;
  const std::uint64_t offset = 777;  // odd on purpose
  {
    UniqueFd fd(::open(master.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    ASSERT_EQ(::ftruncate(fd.get(), static_cast<off_t>(offset + dates * row * sizeof(double))), 0);
  }
  PartSet set(spec, master);
  EXPECT_FALSE(set.split());
  EXPECT_EQ(set.parts(), 1u);
  set.open(offset);
  std::mt19937 rng(5);
  std::vector<double> truth(static_cast<std::size_t>(dates * row));
  for (auto& v : truth) v = static_cast<double>(rng()) / 3.0;
  write_dates(set, spec, truth, 4, dates);
  write_dates(set, spec, truth, 0, 4);
  std::vector<double> back(truth.size());
  set.read_units({0, dates}, back.data());
  EXPECT_EQ(back, truth);
  std::vector<double> raw(truth.size());
  UniqueFd fd(::open(master.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(::pread(fd.get(), raw.data(), raw.size() * sizeof(double), static_cast<off_t>(offset)),
            static_cast<ssize_t>(raw.size() * sizeof(double)));
  EXPECT_EQ(raw, truth);
}

TEST(PartSet, IdentitiesNoticeAChangedPartAndAdoptReadsTheRecordedSet) {
  TempDir dir;
  const std::string out = dir / "out.h5";
  const OutputSpec spec = split_spec(out, 13, 3, 2, 3);
  PartSet set(spec, out + ".partial");
  const std::string name = set.create_split(13 * 3 * 2 * sizeof(double));
  const std::string ids = set.identities();
  std::string damage;
  EXPECT_TRUE(set.changed_parts(ids, damage).empty());
  EXPECT_TRUE(damage.empty());
  // Part 1 rewritten in place (same size): another mtime/ctime.
  ::usleep(20000);
  {
    set.open(0);
    write_dates(set, spec, std::vector<double>(13 * 3 * 2, 1.5), set.bounds()[1], set.bounds()[2]);
    set.sync_and_close();
  }
  EXPECT_EQ(set.changed_parts(ids, damage), std::vector<std::size_t>{1});
  EXPECT_EQ(set.changed_parts("", damage).size(), 3u);  // none recorded: every part changed
  fs::remove(set.part_path(2));
  set.changed_parts(ids, damage);
  EXPECT_FALSE(damage.empty());
  // The master's group as create_master writes it, adopted by another set.
  h5::Id file = h5::file(H5Fcreate((dir / "m.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  h5::Id group = h5::group(H5Gcreate2(file.get(), "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  PartSet other(spec, out + ".partial");
  EXPECT_FALSE(other.adopt(group.get()));  // no attributes
  h5::write_string_attribute(group.get(), "parts_folder", name);
  h5::write_string_attribute(group.get(), "part_bounds", bounds_text(set.bounds()));
  ASSERT_TRUE(other.adopt(group.get()));
  EXPECT_EQ(other.folder(), set.folder());
  EXPECT_EQ(other.bounds(), set.bounds());
}

TEST(PartSet, StaleSetsOfThisOutputGoAndOthersStay) {
  TempDir dir;
  const std::string out = dir / "out.h5";
  const OutputSpec spec = split_spec(out, 10, 2, 2, 2);
  PartSet ours(spec, out + ".partial"), stale(spec, out + ".partial"), kept(spec, out + ".partial");
  ours.create_split(80 * sizeof(double));
  stale.create_split(80 * sizeof(double));
  const std::string kept_name = kept.create_split(80 * sizeof(double));
  const OutputSpec other_spec = split_spec(dir / "other.h5", 10, 2, 2, 2);
  PartSet other(other_spec, dir / "other.h5.partial");
  other.create_split(80 * sizeof(double));
  fs::create_directory(dir / "out.h5.parts-foreign");  // named like ours, no record
  ours.remove_stale(kept_name);
  EXPECT_TRUE(fs::exists(ours.folder()));
  EXPECT_FALSE(fs::exists(stale.folder()));
  EXPECT_TRUE(fs::exists(kept.folder()));
  EXPECT_TRUE(fs::exists(other.folder()));
  EXPECT_TRUE(fs::exists(dir / "out.h5.parts-foreign"));
  ours.remove();
  EXPECT_FALSE(fs::exists(ours.folder()));
}
