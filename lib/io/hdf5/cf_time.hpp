// CF time units ("days since 2024-01-01 00:00:00", as xarray and the netCDF
// library write datetime coordinates). The files of an input.file list may
// each count their dates from a reference date of their own; their values
// are re-expressed against the first file's before they are joined.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace discount {

using TimeNs = __int128;  // nanoseconds: a span of ten thousand years overflows 64 bits

struct TimeUnits {
  std::int64_t step_ns = 0;       // one unit: 86400e9 for days
  TimeNs epoch_ns = 0;            // the reference date, from 1970-01-01 UTC (proleptic Gregorian)
  std::string since;              // the reference date as written, after "since "
  bool before_gregorian = false;  // before 1582-10-15, where the standard calendar is Julian
};

// Empty when `text` is not "<unit> since <date>[ <time>][ <zone>]", with the
// unit one of days, hours, minutes, seconds, milliseconds, microseconds,
// nanoseconds (singular too, any case).
std::optional<TimeUnits> parse_time_units(const std::string& text);

// The longest of those units that divides every value (nanoseconds always does).
std::int64_t common_time_step(const std::vector<TimeNs>& spans_ns);

// "days", "hours", ... for a step common_time_step returns.
const char* time_step_name(std::int64_t step_ns);

// Calendars whose dates parse_time_units counts right: absent, "standard"
// and "gregorian" (from 1582-10-15 on, which the caller checks), and
// "proleptic_gregorian".
bool gregorian_calendar(const std::string& calendar);

}  // namespace discount
