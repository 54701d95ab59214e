// Path helpers (common/paths.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/paths.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using discount::test_support::TempDir;

TEST(Paths, DirOf) {
  EXPECT_EQ(dir_of("a/b/c.h5"), "a/b");
  EXPECT_EQ(dir_of("c.h5"), ".");
  EXPECT_EQ(dir_of("/c.h5"), "/");
  EXPECT_EQ(dir_of("/"), "/");
  EXPECT_EQ(dir_of("a/b/"), "a/b");
  EXPECT_EQ(dir_of("/data/out.h5"), "/data");
}

// The nearest folder that exists: the file system a file made there will use.
TEST(Paths, ExistingFolderWalksUpToAFolder) {
  TempDir dir;
  EXPECT_EQ(existing_folder(dir.path()), dir.path());
  EXPECT_EQ(existing_folder(dir / "x/y/z"), dir.path());
  std::ofstream(dir / "file") << "not a folder";
  EXPECT_EQ(existing_folder(dir / "file"), dir.path());
  EXPECT_EQ(existing_folder(dir / "file/below"), dir.path());
  EXPECT_EQ(existing_folder("/no_such_folder_here/a/b"), "/");
  EXPECT_EQ(existing_folder("no_such_relative_folder/a"), ".");
}
