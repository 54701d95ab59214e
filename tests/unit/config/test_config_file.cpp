// Which files load_config reads (config/config_file.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "common/error.hpp"
#include "common/quote.hpp"
#include "common/threads.hpp"
#include "config/config.hpp"
#include "config/config_file.hpp"

using namespace discount;

TEST(ConfigFile, OnlyASmallRegularFileIsRead) {
  const std::string dir = ::testing::TempDir() + "config_file_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const auto code_of = [](const std::string& path) {
    try {
      read_config_file(path);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      return e.code();
    }
    return ExitCode::ok;
  };
  EXPECT_EQ(code_of(dir), ExitCode::config);  // a directory
  EXPECT_EQ(code_of("/dev/zero"), ExitCode::config);
  EXPECT_EQ(code_of(dir + "/missing.yaml"), ExitCode::input_missing);
  const std::string fifo = dir + "/fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(code_of(fifo), ExitCode::config);  // at once: no writer is waited for
  const std::string big = dir + "/big.yaml", fits = dir + "/fits.yaml";
  std::ofstream(big) << std::string(kMaxConfigBytes + 1, '#');
  std::ofstream(fits) << std::string(kMaxConfigBytes, '#');
  EXPECT_EQ(code_of(big), ExitCode::config);
  EXPECT_EQ(read_config_file(fits).size(), kMaxConfigBytes);
  for (const auto& path : {fifo, big, fits}) std::remove(path.c_str());
  ::rmdir(dir.c_str());
}
