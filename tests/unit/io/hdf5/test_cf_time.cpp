// CF time units (io/hdf5/cf_time.hpp): the reference dates and steps that the
// files of an input.file list count their dates in.
#include "io/hdf5/cf_time.hpp"

#include <gtest/gtest.h>

namespace discount {
namespace {

constexpr std::int64_t kSecond = 1000000000;
constexpr std::int64_t kDay = 86400 * kSecond;

TEST(CfTime, DaysSinceADate) {
  const auto units = parse_time_units("days since 2024-01-01");
  ASSERT_TRUE(units);
  EXPECT_EQ(units->step_ns, kDay);
  EXPECT_TRUE(units->epoch_ns == TimeNs{19723} * kDay);  // 2024-01-01 is day 19723 from 1970-01-01
  EXPECT_EQ(units->since, "2024-01-01");
  EXPECT_FALSE(units->before_gregorian);
}

TEST(CfTime, TimesZonesAndFractions) {
  const auto xarray = parse_time_units("hours since 2000-03-01 06:00:00");
  ASSERT_TRUE(xarray);
  EXPECT_EQ(xarray->step_ns, 3600 * kSecond);
  EXPECT_TRUE(xarray->epoch_ns == TimeNs{11017} * kDay + 6 * 3600 * kSecond);
  EXPECT_EQ(xarray->since, "2000-03-01 06:00:00");
  const auto zoned = parse_time_units("Seconds since 1970-01-01T00:00:00.5+01:00");
  ASSERT_TRUE(zoned);
  EXPECT_EQ(zoned->step_ns, kSecond);
  EXPECT_TRUE(zoned->epoch_ns == TimeNs{kSecond / 2 - 3600 * kSecond});
  const auto utc = parse_time_units("minute since 1969-12-31 23:59 UTC");
  ASSERT_TRUE(utc);
  EXPECT_TRUE(utc->epoch_ns == TimeNs{-60 * kSecond});
  EXPECT_TRUE(parse_time_units("days since 1582-10-14")->before_gregorian);
  EXPECT_FALSE(parse_time_units("days since 1582-10-15")->before_gregorian);
  EXPECT_TRUE(parse_time_units("nanoseconds since 2024-01-01 00:00:00.123456789000"));
}

TEST(CfTime, NotTimeUnits) {
  for (const char* text : {"", "days", "1", "years since 2024-01-01", "days after 2024-01-01", "days since 2024-02-30",
                           "days since 2023-02-29", "days since 2024-13-01", "hours since 2024-01-01 25:00",
                           "days since 2024-01-01 junk", "nanoseconds since 2024-01-01 00:00:00.1234567891"})
    EXPECT_FALSE(parse_time_units(text)) << text;
  EXPECT_TRUE(parse_time_units("days since 2024-02-29"));
}

TEST(CfTime, CommonStep) {
  EXPECT_EQ(common_time_step({kDay, 3 * kDay}), kDay);
  EXPECT_EQ(common_time_step({kDay, 6 * 3600 * kSecond}), 3600 * kSecond);
  EXPECT_EQ(common_time_step({kDay, kSecond / 2}), 1000000);
  EXPECT_EQ(common_time_step({0}), kDay);
  EXPECT_EQ(common_time_step({TimeNs{7}}), 1);
  EXPECT_STREQ(time_step_name(3600 * kSecond), "hours");
  EXPECT_STREQ(time_step_name(1000), "microseconds");
}

TEST(CfTime, Calendars) {
  for (const char* c : {"", "standard", "Gregorian", "proleptic_gregorian"}) EXPECT_TRUE(gregorian_calendar(c)) << c;
  for (const char* c : {"noleap", "365_day", "360_day", "julian", "all_leap"}) EXPECT_FALSE(gregorian_calendar(c)) << c;
}

}  // namespace
}  // namespace discount
