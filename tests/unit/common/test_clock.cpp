// Wall-clock times as text, in UTC (common/clock.hpp).
#include <gtest/gtest.h>

#include <ctime>
#include <regex>
#include <string>

#include "common/clock.hpp"

using namespace discount;

TEST(Clock, Iso8601AndMinutesInUtc) {
  EXPECT_EQ(utc_timestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_timestamp(1796492289), "2026-12-05T17:38:09Z");
  EXPECT_EQ(utc_timestamp(4102444799), "2099-12-31T23:59:59Z");
  EXPECT_EQ(utc_minutes(1796492289), "2026-12-05 17:38 UTC");
}

// Whatever the process's time zone says.
TEST(Clock, NowIsUtcWhateverTheZone) {
  ::setenv("TZ", "Pacific/Chatham", 1);
  ::tzset();
  const std::time_t before = std::time(nullptr);
  const std::string now = utc_now();
  const std::time_t after = std::time(nullptr);
  ::unsetenv("TZ");
  ::tzset();
  EXPECT_TRUE(std::regex_match(now, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << now;
  EXPECT_GE(now, utc_timestamp(before));
  EXPECT_LE(now, utc_timestamp(after));
}
