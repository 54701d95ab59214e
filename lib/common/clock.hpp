// Wall-clock times as text, always in UTC so runs on different hosts compare.
#pragma once

#include <ctime>
#include <string>

namespace discount {

// "2026-11-29T17:38:09Z" (ISO 8601): log prefixes, the output's start/end times, run records.
std::string utc_timestamp(std::time_t time);
// utc_timestamp of now.
std::string utc_now();
// "2026-11-29 17:38 UTC": when a measurement or a file was made, for people.
std::string utc_minutes(std::time_t time);

}  // namespace discount
