// O_DIRECT and buffered writes (io/posix/posix_io.hpp), against plain reads.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <fstream>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/input.hpp"
#include "io/input/memory_arrays.hpp"
#include "io/output/output.hpp"
#include "io/records/output_parts.hpp"
#include "io/posix/posix_io.hpp"
#include "io/input/synthetic.hpp"
#include "commands/tools.hpp"

#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using TempDir = discount::test_support::TempDir;

#include "support/output_files.hpp"

using namespace discount::test_support;

// Runs at an unaligned base: single elements, runs inside one 4 KiB block,
// runs crossing many blocks and more than one 4 MiB staging piece. Every byte
// of every run must land, and every byte between runs must stay as it was.
static void check_direct_writes(const std::string& path, bool expect_direct) {
  const std::uint64_t base = 1234, file_bytes = std::uint64_t{12} << 20;
  const std::vector<Run> runs{{0, 1}, {5, 1000}, {2000, 600000}, {700000, 512}, {800000, 3}, {900000, 510}};
  std::size_t total = 0;
  for (const auto& r : runs) total += static_cast<std::size_t>(r.length);
  std::vector<double> packed(total);
  for (std::size_t e = 0; e < total; ++e) packed[e] = 1.0 + 1e-7 * static_cast<double>(e * 7919 % 1000003);
  {
    std::vector<char> poison(file_bytes, char(0xAB));
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, poison.data(), poison.size(), 0), static_cast<ssize_t>(poison.size()));
    DirectWriter writer(path, DirectWriter::kMaxPiece);
    if (expect_direct) { EXPECT_TRUE(writer.active()) << path << ": this file system should take O_DIRECT"; }
    writer.write_runs(fd, base, runs, packed.data(), sizeof(double), "test");
    if (expect_direct) { EXPECT_TRUE(writer.active()) << "fell back to the page cache"; }
    ASSERT_EQ(::fdatasync(fd), 0);
    ::close(fd);
  }
  std::vector<char> file(file_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_EQ(::pread(fd, file.data(), file.size(), 0), static_cast<ssize_t>(file.size()));
  ::close(fd);
  std::vector<char> expected(file_bytes, char(0xAB));
  std::size_t at = 0;
  for (const auto& r : runs) {
    std::memcpy(expected.data() + base + static_cast<std::size_t>(r.offset) * 8, packed.data() + at,
                static_cast<std::size_t>(r.length) * 8);
    at += static_cast<std::size_t>(r.length);
  }
  std::size_t bad = 0;
  for (std::size_t b = 0; b < file_bytes; ++b) bad += file[b] != expected[b];
  EXPECT_EQ(bad, 0u) << path;
}

TEST(Io, DirectWriterWritesEveryRunAndNothingElse) {
  TempDir dir;
  struct statfs fs_info {};
  ASSERT_EQ(::statfs("/tmp", &fs_info), 0);
  // ext4 and XFS take O_DIRECT; elsewhere the content must still be right.
  const bool direct = fs_info.f_type == 0xEF53 || fs_info.f_type == 0x58465342;
  check_direct_writes(dir / "direct.bin", direct);
}

TEST(Io, DirectWriterStagingFitsAnEighthOfTheBudget) {
  EXPECT_EQ(DirectWriter::piece_for(std::uint64_t{64} << 20, 2), DirectWriter::kMaxPiece);
  EXPECT_EQ(DirectWriter::piece_for(std::uint64_t{1} << 30, 8), DirectWriter::kMaxPiece);
  EXPECT_EQ(DirectWriter::piece_for(std::uint64_t{16} << 20, 8), std::uint64_t{256} << 10);
  EXPECT_EQ(DirectWriter::piece_for(605398, 2), 36864u);  // 591 KiB: 36 KiB each, 4 KiB-aligned
  EXPECT_EQ(DirectWriter::piece_for(1024, 2), DirectWriter::kAlign);
  EXPECT_EQ(DirectWriter::piece_for(1024, 0), DirectWriter::kAlign);
}

TEST(Io, DirectWriterOnTmpfs) {
  // tmpfs takes O_DIRECT since Linux 6.6 but still copies into its page
  // cache: the writer skips O_DIRECT there (no bounce-buffer copy) and
  // every byte must land.
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  char pattern[] = "/dev/shm/discount_test_direct_XXXXXX";
  const int fd = ::mkstemp(pattern);
  ASSERT_GE(fd, 0);
  ::close(fd);
  if (!memory_backed(pattern)) GTEST_SKIP() << "/dev/shm is not tmpfs here";
  {
    DirectWriter writer(pattern, DirectWriter::kMaxPiece);
    EXPECT_TRUE(writer.memory_backed());
    EXPECT_FALSE(writer.active());
  }
  check_direct_writes(pattern, false);
  ::unlink(pattern);
}

TEST(Io, FullTmpfsMidWriteIsAnErrorNotACrash) {
  // The tmpfs writer stores through a shared mapping; a plain store into a
  // page the file system cannot give would kill the process with SIGBUS.
  // A 1 MiB tmpfs, a sparse 8 MiB file, 4 MiB written: a clean io_error.
  TempDir dir;
  const std::string mount_point = dir / "small";
  fs::create_directory(mount_point);
  if (::geteuid() != 0 || std::system(("mount -t tmpfs -o size=1m tmpfs " + mount_point + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs (needs root)";
  const std::string path = mount_point + "/out.bin";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8 << 20), 0);
  const std::vector<double> values(std::size_t{4} << 17, 1.5);  // 4 MiB
  {
    DirectWriter writer(path, DirectWriter::kMaxPiece);
    EXPECT_TRUE(writer.memory_backed());
    try {
      writer.write_runs(fd, 0, {{0, static_cast<std::int64_t>(values.size())}}, values.data(), sizeof(double),
                        "writing the test file");
      ADD_FAILURE() << "4 MiB fitted into a 1 MiB tmpfs";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::io_error);
      EXPECT_NE(std::string(e.what()).find("no space left on device"), std::string::npos) << e.what();
    }
  }
  ::close(fd);
  std::system(("umount " + mount_point).c_str());
}
