// A small file written whole or not at all (io/posix/atomic_file.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "io/posix/atomic_file.hpp"
#include "support/file_text.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using discount::test_support::read_text;
using discount::test_support::TempDir;

namespace {

void expect_io_error_naming(const std::string& path, const std::string& text) {
  try {
    write_file_atomically(path, text, "report");
    ADD_FAILURE() << "written: " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::io_error);
    EXPECT_NE(std::string(e.what()).find("cannot write report '" + path + "'"), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(AtomicFile, WritesAndReplacesWholeLeavingNoTemporary) {
  TempDir dir;
  const std::string path = dir / "run.json";
  write_file_atomically(path, "{\"a\": 1}\n", "report");
  EXPECT_EQ(read_text(path), "{\"a\": 1}\n");
  const std::string longer(1 << 20, 'x');
  write_file_atomically(path, longer, "report");
  EXPECT_EQ(read_text(path), longer);
  write_file_atomically(path, "", "report");
  EXPECT_EQ(read_text(path), "");
  EXPECT_EQ(atomic_temp_path(path), path + ".tmp." + std::to_string(::getpid()));
  EXPECT_FALSE(fs::exists(atomic_temp_path(path)));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}), 1);
}

// A folder at the path: the rename fails, the folder and what it holds stay,
// and no temporary is left.
TEST(AtomicFile, FailureLeavesTheOldPathAndNoTemporary) {
  TempDir dir;
  const std::string path = dir / "run.json";
  fs::create_directory(path);
  std::ofstream(path + "/inside") << "kept";
  expect_io_error_naming(path, "new");
  EXPECT_EQ(read_text(path + "/inside"), "kept");
  EXPECT_FALSE(fs::exists(atomic_temp_path(path)));
  expect_io_error_naming(dir / "missing/run.json", "new");  // no folder
}

// A link planted at the temporary name is not followed: its target keeps
// its bytes, the old file its own.
TEST(AtomicFile, LinkAtTheTemporaryNameNotFollowed) {
  TempDir dir;
  const std::string path = dir / "run.json", target = dir / "precious";
  std::ofstream(target) << "precious";
  std::ofstream(path) << "old";
  fs::create_symlink(target, atomic_temp_path(path));
  expect_io_error_naming(path, "new");
  EXPECT_EQ(read_text(target), "precious");
  EXPECT_EQ(read_text(path), "old");
}
