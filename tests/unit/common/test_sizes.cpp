// Byte counts written for people (common/sizes.hpp).
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

// Sizes a user reads: whole numbers without ".00", the unit after a space.
TEST(Sizes, FormatBytesAsPeopleReadThem) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(std::uint64_t{256} << 20), "256 MiB");
  EXPECT_EQ(format_bytes(std::uint64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(format_bytes(1100), "1.07 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{1} << 40), "1 TiB");
  EXPECT_EQ(format_bytes(std::uint64_t{5} << 50), "5120 TiB");
}
