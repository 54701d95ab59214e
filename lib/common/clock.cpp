#include "common/clock.hpp"

namespace discount {

namespace {
std::string utc_text(std::time_t time, const char* format) {
  std::tm tm{};
  ::gmtime_r(&time, &tm);
  char text[40];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}
}  // namespace

std::string utc_timestamp(std::time_t time) { return utc_text(time, "%Y-%m-%dT%H:%M:%SZ"); }

std::string utc_now() { return utc_timestamp(std::time(nullptr)); }

std::string utc_minutes(std::time_t time) { return utc_text(time, "%Y-%m-%d %H:%M UTC"); }

}  // namespace discount
