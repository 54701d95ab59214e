// The split output's part record (io/posix/part_record.hpp) and the escaping of
// names in a virtual dataset's mapping (io/hdf5/vds_names.hpp): pure text and
// POSIX folders, no HDF5.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "io/hdf5/vds_names.hpp"
#include "io/posix/part_record.hpp"
#include "support/temp_dir.hpp"

namespace discount {
namespace {

using test_support::TempDir;

std::string every_printable() {
  std::string text;
  for (char c = 32; c < 127; ++c)
    if (c != '/') text += c;
  return text + "\xc3\xa9\xe6\x97\xa5";  // é, and a UTF-8 lead byte with its tail
}

void touch(const std::string& path, const std::string& text = "x") { std::ofstream(path) << text; }

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(PartRecord, RoundTripsAnyName) {
  const PartRecord record{
      "cv " + every_printable() + ".h5", "cv.h5.parts-1a-2b\nx", {"part-00000.h5", "part-00001.h5"}};
  std::string damage;
  const auto back = parse_part_record(part_record_text(record), damage);
  ASSERT_TRUE(back) << damage;
  EXPECT_EQ(back->output, record.output);
  EXPECT_EQ(back->folder, record.folder);
  EXPECT_EQ(back->parts, record.parts);
  // One record line per item: names never break a line.
  const std::string text = part_record_text(record);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6);
}

TEST(PartRecord, DamagedRecordsAreRefused) {
  const std::string good = part_record_text({"out.h5", "out.h5.parts-a", {"part-00000.h5"}});
  std::string damage;
  for (const std::string& bad :
       {std::string(), std::string("discount_app part set 2\n") + good.substr(good.find('\n') + 1),
        good.substr(0, good.rfind("end")), good + "part part-00002.h5\n", good.substr(0, good.rfind("end")) + "end 2\n",
        std::string(good).replace(good.find("part-"), 5, "..%2F"),
        std::string(good).replace(good.find("output "), 7, "owner ")}) {
    damage.clear();
    EXPECT_FALSE(parse_part_record(bad, damage)) << bad;
    EXPECT_FALSE(damage.empty()) << bad;
  }
}

TEST(PartRecord, RemovesOnlyTheListedFilesOfItsOwnOutput) {
  TempDir dir("part_record");
  const std::string folder = dir / "out.h5.parts-a";
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  write_part_record(folder, {"out.h5", "out.h5.parts-a", {"part-00000.h5", "part-00001.h5"}});
  touch(folder + "/part-00000.h5");
  touch(folder + "/part-00001.h5");
  EXPECT_NE(remove_part_set(folder, "out.h5.parts-x.h5"), "") << "another output's name";
  EXPECT_TRUE(exists(folder + "/part-00000.h5"));
  EXPECT_EQ(remove_part_set(folder, "out.h5"), "");
  EXPECT_FALSE(exists(folder));
}

TEST(PartRecord, LeavesOtherFilesAndTheirFolder) {
  TempDir dir("part_record");
  const std::string folder = dir / "out.h5.parts-b";
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  write_part_record(folder, {"out.h5", "out.h5.parts-b", {"part-00000.h5"}});
  touch(folder + "/part-00000.h5");
  touch(folder + "/notes.txt");
  const std::string why = remove_part_set(folder, "out.h5");
  EXPECT_NE(why.find("other files"), std::string::npos) << why;
  EXPECT_FALSE(exists(folder + "/part-00000.h5"));
  EXPECT_TRUE(exists(folder + "/notes.txt"));
}

TEST(PartRecord, NeverFollowsASymlinkOrTrustsAMovedRecord) {
  TempDir dir("part_record");
  const std::string real = dir / "elsewhere";
  ASSERT_EQ(::mkdir(real.c_str(), 0755), 0);
  write_part_record(real, {"out.h5", "out.h5.parts-link", {"part-00000.h5"}});
  touch(real + "/part-00000.h5");
  ASSERT_EQ(::symlink(real.c_str(), (dir / "out.h5.parts-link").c_str()), 0);
  EXPECT_NE(remove_part_set(dir / "out.h5.parts-link", "out.h5").find("symbolic link"), std::string::npos);
  EXPECT_TRUE(exists(real + "/part-00000.h5"));
  // a record copied into a folder of another name names that other folder
  const std::string copy = dir / "out.h5.parts-copy";
  ASSERT_EQ(::mkdir(copy.c_str(), 0755), 0);
  write_part_record(copy, {"out.h5", "out.h5.parts-a", {"part-00000.h5"}});
  touch(copy + "/part-00000.h5");
  EXPECT_NE(remove_part_set(copy, "out.h5").find("another folder"), std::string::npos);
  EXPECT_TRUE(exists(copy + "/part-00000.h5"));
  // no record at all
  const std::string bare = dir / "out.h5.parts-notes";
  ASSERT_EQ(::mkdir(bare.c_str(), 0755), 0);
  touch(bare + "/part-00000.h5");
  EXPECT_NE(remove_part_set(bare, "out.h5"), "");
  EXPECT_TRUE(exists(bare + "/part-00000.h5"));
}

TEST(VdsNames, EscapeDoublesPercentAndRoundTrips) {
  EXPECT_EQ(vds_escape("cv_50%.h5"), "cv_50%%.h5");
  EXPECT_EQ(vds_escape("a%b%%"), "a%%b%%%%");
  EXPECT_EQ(vds_unescape(vds_escape(every_printable())), every_printable());
  EXPECT_EQ(vds_unescape("data-%b.h5"), "data-%b.h5");  // another tool's printf-style mapping is kept
}

}  // namespace
}  // namespace discount
