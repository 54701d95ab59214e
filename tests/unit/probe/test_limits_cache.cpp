// This host's cached link limits (probe/limits_cache.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "config/config.hpp"
#include "support/kokkos_env.hpp"
#include "plan/limits.hpp"
#include "probe/io_rates.hpp"
#include "probe/job_limits.hpp"
#include "probe/limits_cache.hpp"
#include "probe/links.hpp"
#include "report/report.hpp"
#include "common/error.hpp"
#include "config/config_json.hpp"
#include "probe/earlier_report.hpp"

#include <yaml-cpp/yaml.h>

using namespace discount;

// The per-host cache of measured links (probe/limits_cache.hpp): a stored
// entry comes back for the same key while young enough, marked as cached;
// another key, an old entry or cache_days 0 measure again.
TEST(LimitsCache, StoresAndReusesOnlyTheSameKeyWhileYoung) {
  char dir[] = "/tmp/discount_limits_cache_XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  ::setenv("DISCOUNT_CACHE_DIR", dir, 1);
  Limits measured;
  measured.h2d = {54.79, LinkSource::measured};
  measured.kernel = {3714.4, LinkSource::measured};
  measured.read = {2.5, LinkSource::configured};  // configured links are not the host's: never stored
  const std::string key = "host node7\nbuild discount_app 1.0\nbuffer bytes 268435456\n";
  const std::time_t day = 86400, then = 1'800'000'000;
  store_cached_limits(key, measured, then);

  const auto hit = load_cached_limits(key, 7, then + 6 * day);
  ASSERT_TRUE(hit.has_value());
  EXPECT_DOUBLE_EQ(hit->h2d.gb_per_s, 54.79);
  EXPECT_DOUBLE_EQ(hit->kernel.gb_per_s, 3714.4);
  EXPECT_TRUE(hit->kernel.cached);
  EXPECT_EQ(hit->kernel.source, LinkSource::measured);
  EXPECT_FALSE(hit->d2h.known());
  EXPECT_FALSE(hit->read.known());
  EXPECT_NE(hit->describe().find("kernel 3714.40 GB/s (measured 2027-01-15"), std::string::npos) << hit->describe();

  EXPECT_FALSE(load_cached_limits(key, 7, then + 8 * day).has_value());  // too old
  EXPECT_FALSE(load_cached_limits(key, 0, then).has_value());            // cache_days: 0
  EXPECT_FALSE(load_cached_limits("host node8\n" + key.substr(11), 7, then).has_value());
  EXPECT_FALSE(load_cached_limits(key, 7, then - day).has_value());  // a clock gone backwards
  std::filesystem::remove_all(dir);
  ::unsetenv("DISCOUNT_CACHE_DIR");
}

// A cache entry stands for the job only when it holds every link the job
// measures; configured links win over it (probe/job_limits.hpp).
TEST(LimitsCache, FromCacheNeedsEveryMeasuredLinkAndKeepsConfigured) {
  Limits cached;
  cached.kernel = {300.0, LinkSource::measured, true, "2027-01-15 08:00 UTC"};
  cached.h2d = {50.0, LinkSource::measured, true, "2027-01-15 08:00 UTC"};
  LimitsConfig config;
  config.measure = true;
  EXPECT_FALSE(from_cache(std::nullopt, config, false).has_value());
  const auto host = from_cache(cached, config, false);  // host kernel: only the kernel link
  ASSERT_TRUE(host.has_value());
  EXPECT_DOUBLE_EQ(host->kernel.gb_per_s, 300.0);
  EXPECT_TRUE(host->kernel.cached);
  EXPECT_FALSE(from_cache(cached, config, true).has_value());  // d2h is missing
  config.d2h = 20.0;
  const auto device = from_cache(cached, config, true);
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(device->d2h.source, LinkSource::configured);
  EXPECT_DOUBLE_EQ(device->d2h.gb_per_s, 20.0);
  EXPECT_EQ(device->h2d.source, LinkSource::measured);
}
