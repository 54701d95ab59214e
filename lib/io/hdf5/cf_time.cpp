#include "io/hdf5/cf_time.hpp"

#include <algorithm>
#include <cctype>

namespace discount {

namespace {

constexpr std::int64_t kSecond = 1000000000;

struct Step {
  std::int64_t ns;
  const char* name;
};
constexpr Step kSteps[] = {{86400 * kSecond, "days"}, {3600 * kSecond, "hours"}, {60 * kSecond, "minutes"},
                           {kSecond, "seconds"},      {1000000, "milliseconds"}, {1000, "microseconds"},
                           {1, "nanoseconds"}};

std::int64_t step_of(const std::string& word) {
  std::string w = word;
  if (w.size() > 1 && w.back() == 's') w.pop_back();
  for (const Step& s : kSteps)
    if (w + "s" == s.name) return s.ns;
  return 0;
}

// Days from 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// A run of digits at `at` as a number; false when there is none.
bool number(const std::string& s, std::size_t& at, std::int64_t& value, std::size_t max_digits = 9) {
  const std::size_t start = at;
  value = 0;
  while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])) && at - start < max_digits)
    value = value * 10 + (s[at++] - '0');
  return at > start;
}

bool eat(const std::string& s, std::size_t& at, char c) {
  if (at < s.size() && s[at] == c) {
    ++at;
    return true;
  }
  return false;
}

// [ +|-]HH[[:]MM], Z, UTC or GMT at `at`, as seconds east of UTC; false on anything else.
bool zone(const std::string& s, std::size_t at, std::int64_t& east) {
  while (at < s.size() && s[at] == ' ') ++at;
  const std::string rest = s.substr(at);
  east = 0;
  if (rest.empty() || rest == "z" || rest == "utc" || rest == "gmt") return true;
  if (rest[0] != '+' && rest[0] != '-') return false;
  std::size_t p = 1;
  std::int64_t h = 0, m = 0;
  if (!number(rest, p, h, 2) || h > 23) return false;
  eat(rest, p, ':');
  if (p < rest.size() && (!number(rest, p, m, 2) || m > 59)) return false;
  if (p != rest.size()) return false;
  east = (rest[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
  return true;
}

// "Y-M-D[( |T)H:M[:S[.F]]][ zone]" as ns from 1970-01-01 UTC.
bool date_time(const std::string& s, TimeNs& ns, bool& before_gregorian) {
  std::size_t at = 0;
  std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, frac = 0;
  if (!number(s, at, y, 6) || !eat(s, at, '-') || !number(s, at, mo, 2) || !eat(s, at, '-') || !number(s, at, d, 2))
    return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] + (mo == 2 && leap(y))) return false;
  if (at < s.size() && (s[at] == ' ' || s[at] == 't') && at + 1 < s.size() &&
      std::isdigit(static_cast<unsigned char>(s[at + 1]))) {
    ++at;
    if (!number(s, at, h, 2) || !eat(s, at, ':') || !number(s, at, mi, 2) || h > 23 || mi > 59) return false;
    if (eat(s, at, ':') && (!number(s, at, sec, 2) || sec > 60)) return false;
    if (eat(s, at, '.')) {
      const std::size_t start = at;
      if (!number(s, at, frac, 9)) return false;
      for (std::size_t k = at - start; k < 9; ++k) frac *= 10;
      while (at < s.size() && s[at] == '0') ++at;  // zeros beyond nanoseconds change nothing
    }
  }
  std::int64_t east = 0;
  if (!zone(s, at, east)) return false;
  before_gregorian = y < 1582 || (y == 1582 && (mo < 10 || (mo == 10 && d < 15)));
  const std::int64_t seconds = h * 3600 + mi * 60 + sec - east;
  ns = static_cast<TimeNs>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400 * kSecond +
       static_cast<TimeNs>(seconds) * kSecond + frac;
  return true;
}

}  // namespace

std::optional<TimeUnits> parse_time_units(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto since = lower.find(" since ");
  if (since == std::string::npos) return std::nullopt;
  std::string word = lower.substr(0, since);
  word.erase(0, word.find_first_not_of(' '));
  TimeUnits units;
  units.step_ns = step_of(word);
  std::size_t from = since + 7;
  while (from < lower.size() && lower[from] == ' ') ++from;
  std::size_t to = lower.size();
  while (to > from && lower[to - 1] == ' ') --to;
  if (units.step_ns == 0 || !date_time(lower.substr(from, to - from), units.epoch_ns, units.before_gregorian))
    return std::nullopt;
  units.since = text.substr(from, to - from);
  return units;
}

std::int64_t common_time_step(const std::vector<TimeNs>& spans_ns) {
  for (const Step& s : kSteps)
    if (std::all_of(spans_ns.begin(), spans_ns.end(), [&](TimeNs v) { return v % s.ns == 0; })) return s.ns;
  return 1;
}

const char* time_step_name(std::int64_t step_ns) {
  for (const Step& s : kSteps)
    if (s.ns == step_ns) return s.name;
  return "nanoseconds";
}

bool gregorian_calendar(const std::string& calendar) {
  std::string c = calendar;
  std::transform(c.begin(), c.end(), c.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return c.empty() || c == "standard" || c == "gregorian" || c == "proleptic_gregorian";
}

}  // namespace discount
