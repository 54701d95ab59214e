#include "probe/limits_cache.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.hpp"
#include "common/fingerprint.hpp"
#include "common/knobs.hpp"

namespace discount {

namespace {

constexpr const char* kHeader = "# discount_app: measured link limits of one host and build; delete to measure again";

std::string entry_path(const std::string& key, const std::string& dir) {
  return limits_cache_dir(dir) + "/limits-" + fingerprint_of(key) + ".txt";
}

}  // namespace

std::string limits_cache_dir(const std::string& dir) {
  if (!dir.empty()) return dir;
  if (const char* xdg = environment_value("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/discount_app";
  if (const char* home = environment_value("HOME"); home && *home) return std::string(home) + "/.cache/discount_app";
  return "/tmp/discount_app-cache-" + std::to_string(::getuid());
}

std::optional<Limits> load_cached_limits(const std::string& key, int max_days, std::time_t now,
                                         const std::string& dir) {
  if (max_days <= 0) return std::nullopt;
  std::ifstream in(entry_path(key, dir));
  if (!in) return std::nullopt;
  std::string line, stored_key;
  std::time_t when = 0;
  Limits limits;
  while (std::getline(in, line)) {
    if (line.rfind("key ", 0) == 0) stored_key += line.substr(4) + "\n";
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (name == "measured_at") fields >> when;
    for (Stage stage : kAllStages)
      if (name == stage_name(stage)) {
        double value = 0;
        fields >> value;
        if (value > 0) limits.of(stage) = {value, LinkSource::measured, true, ""};
      }
  }
  // The key is stored line by line; a different key with the same hash is no hit.
  if (stored_key != key + (key.empty() || key.back() == '\n' ? "" : "\n") || when <= 0) return std::nullopt;
  if (now < when || now - when > static_cast<std::time_t>(max_days) * 86400) return std::nullopt;
  for (Stage stage : kAllStages)
    if (limits.of(stage).known()) limits.of(stage).measured_at = utc_minutes(when);
  return limits;
}

void store_cached_limits(const std::string& key, const Limits& limits, std::time_t now, const std::string& dir) {
  std::error_code ignored;  // a folder that cannot be made shows up when the entry cannot be written
  std::filesystem::create_directories(limits_cache_dir(dir), ignored);
  const std::string path = entry_path(key, dir);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;
    out << kHeader << "\n";
    std::istringstream lines(key);
    for (std::string line; std::getline(lines, line);) out << "key " << line << "\n";
    out << "measured_at " << static_cast<long long>(now) << "  # " << utc_minutes(now) << "\n";
    for (Stage stage : kAllStages) {
      const LinkLimit& link = limits.of(stage);
      if (link.known() && link.source == LinkSource::measured && !link.cached)
        out << stage_name(stage) << " " << link.gb_per_s << "\n";
    }
    if (!out.flush()) {
      ::unlink(tmp.c_str());
      return;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
}

}  // namespace discount
