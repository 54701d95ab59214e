#include "plan/limits.hpp"

#include <cstdio>
#include <optional>

#include "config/config.hpp"

namespace discount {

namespace {

std::string speed_text(const char* name, const LinkLimit& link) {
  if (!link.known()) return std::string(name) + " unknown";
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.2f GB/s", link.gb_per_s);
  const std::string from = link.cached ? "measured " + link.measured_at + ", cached" : link.source_text();
  return std::string(name) + " " + rate + " (" + from + ")";
}

}  // namespace

const char* link_source_name(LinkSource source) {
  switch (source) {
    case LinkSource::configured: return "configured";
    case LinkSource::measured: return "measured";
    case LinkSource::earlier_report: return "report";
    case LinkSource::unknown: break;
  }
  return "";
}

std::string Limits::describe() const {
  std::string text;
  for (Stage stage : kAllStages) text += (text.empty() ? "" : ", ") + speed_text(stage_name(stage), of(stage));
  return text;
}

Limits configured_limits(const LimitsConfig& config) {
  Limits limits;
  auto take = [](LinkLimit& link, const std::optional<double>& value) {
    if (value && *value > 0) link = {*value, LinkSource::configured};
  };
  take(limits.read, config.read);
  take(limits.h2d, config.h2d);
  take(limits.kernel, config.kernel);
  take(limits.d2h, config.d2h);
  take(limits.write, config.write);
  return limits;
}

}  // namespace discount
