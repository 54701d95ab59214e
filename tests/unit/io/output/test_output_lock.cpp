// One job per output: the flock()ed lock file (io/output/output_lock.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "io/output/output_lock.hpp"
#include "support/file_text.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using discount::test_support::read_text;
using discount::test_support::TempDir;

namespace {

// The refusal a second taker gets (flock conflicts between two open files
// of one process as between two processes).
std::string refusal(const std::string& lock, const std::string& what) {
  try {
    HeldLock second = take_output_lock(lock, what);
    ADD_FAILURE() << "taken twice: " << lock;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::cannot_create);
    return e.what();
  }
  return {};
}

}  // namespace

TEST(OutputLock, HeldNamesItsHolderRefusesASecondAndGoesWithIt) {
  TempDir dir;
  const std::string lock = dir / ".out.h5.lock", what = dir / "out.h5";
  {
    HeldLock held = take_output_lock(lock, what);
    const std::string text = read_text(lock);
    EXPECT_EQ(text.rfind("pid " + std::to_string(::getpid()) + " on host ", 0), 0u) << text;
    const std::string why = refusal(lock, what);
    EXPECT_NE(why.find("another job is writing '" + what + "'"), std::string::npos) << why;
    EXPECT_NE(why.find("pid " + std::to_string(::getpid())), std::string::npos) << why;
    EXPECT_NE(why.find(lock), std::string::npos) << why;
  }
  EXPECT_FALSE(fs::exists(lock));  // unlinked by its holder
  HeldLock again = take_output_lock(lock, what);
  EXPECT_TRUE(fs::exists(lock));
}

// A lock file left by a killed job (its flock gone with the process) does
// not block; whatever it holds is replaced by the new holder's line.
TEST(OutputLock, LeftoverFileDoesNotBlock) {
  TempDir dir;
  const std::string lock = dir / ".out.h5.lock";
  std::ofstream(lock) << "pid 1 on host gone\n";
  HeldLock held = take_output_lock(lock, dir / "out.h5");
  EXPECT_EQ(read_text(lock).rfind("pid " + std::to_string(::getpid()), 0), 0u);
}

// The holder's text is shown bounded and printable, whatever the file holds.
TEST(OutputLock, HolderTextMadePrintable) {
  TempDir dir;
  const std::string lock = dir / ".out.h5.lock";
  HeldLock held = take_output_lock(lock, dir / "out.h5");
  std::ofstream(lock, std::ios::trunc) << "\x1b[31mred\x07" << std::string(5000, 'y') << "\n";
  const std::string why = refusal(lock, dir / "out.h5");
  EXPECT_EQ(why.find('\x1b'), std::string::npos) << why;
  EXPECT_EQ(why.find('\x07'), std::string::npos) << why;
  EXPECT_LT(why.size(), 600u) << why;
}

TEST(OutputLock, LockInAMissingFolderRefused) {
  TempDir dir;
  try {
    HeldLock held = take_output_lock(dir / "missing/.out.h5.lock", dir / "missing/out.h5");
    ADD_FAILURE() << "locked in a missing folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::cannot_create);
    EXPECT_NE(std::string(e.what()).find("cannot create the lock file"), std::string::npos) << e.what();
  }
}
