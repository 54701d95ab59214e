// The job's link limits: configured, measured and where each came from (probe/job_limits.hpp).
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

TEST(Limits, ConfiguredOnlyWhenMeasureIsOff) {
  LimitsConfig config;
  config.read = 2.5;
  config.kernel = 100.0;
  config.measure = false;
  const Limits limits = measure_limits(config, true);
  EXPECT_DOUBLE_EQ(limits.read.gb_per_s, 2.5);
  EXPECT_EQ(limits.read.source, LinkSource::configured);
  EXPECT_DOUBLE_EQ(limits.kernel.gb_per_s, 100.0);
  EXPECT_FALSE(limits.h2d.known());
  EXPECT_FALSE(limits.d2h.known());
  EXPECT_FALSE(limits.write.known());
  EXPECT_EQ(limits.h2d.source, LinkSource::unknown);
  EXPECT_EQ(limits.of("kernel"), &limits.kernel);
  EXPECT_EQ(limits.of("bogus"), nullptr);
  EXPECT_NE(limits.describe().find("write unknown"), std::string::npos) << limits.describe();
}

TEST(Limits, MeasuresTheHostKernel) {
  const Limits limits = measure_limits(LimitsConfig{}, false);
  EXPECT_GT(limits.kernel.gb_per_s, 0.0);
  EXPECT_EQ(limits.kernel.source, LinkSource::measured);
  EXPECT_FALSE(limits.read.known());  // disks are never measured
  EXPECT_FALSE(limits.write.known());
  EXPECT_FALSE(limits.h2d.known());  // no copies in host space
}

TEST(Limits, MeasuresTheCopyLinksAndConfiguredWins) {
  LimitsConfig config;
  config.d2h = 12.5;
  const Limits limits = measure_limits(config, true);
  EXPECT_GT(limits.h2d.gb_per_s, 0.0);
  EXPECT_EQ(limits.h2d.source, LinkSource::measured);
  EXPECT_GT(limits.kernel.gb_per_s, 0.0);
  EXPECT_DOUBLE_EQ(limits.d2h.gb_per_s, 12.5);
  EXPECT_EQ(limits.d2h.source, LinkSource::configured);
}

TEST(Limits, FreeDiskBytes) {
  EXPECT_GT(free_disk_bytes(DISCOUNT_SOURCE_DIR "/docs/config.md"), 0u);
  EXPECT_GT(free_disk_bytes("relative-file-in-the-working-directory.h5"), 0u);
  // A missing folder counts its nearest existing parent's file system (the
  // run creates the folder there): "/" here.
  EXPECT_GT(free_disk_bytes("/nonexistent/dir/out.h5"), 0u);
}

// What the JSON report and the plan's rows print for each source.
TEST(Limits, SourceNamesAndNotes) {
  EXPECT_STREQ(link_source_name(LinkSource::unknown), "");
  EXPECT_STREQ(link_source_name(LinkSource::configured), "configured");
  EXPECT_STREQ(link_source_name(LinkSource::measured), "measured");
  EXPECT_STREQ(link_source_name(LinkSource::earlier_report), "report");
  Limits limits;
  limits.read = {1.5, LinkSource::earlier_report};
  limits.read.note = "report run.json of 2027-01-15 08:00 UTC (7 min ago)";
  limits.write = measured_now(0.75);
  EXPECT_EQ(limits.write.source, LinkSource::measured);
  const std::string text = limits.describe();
  EXPECT_NE(text.find("read 1.50 GB/s (report run.json of 2027-01-15 08:00 UTC (7 min ago))"), std::string::npos)
      << text;
  EXPECT_NE(text.find("write 0.75 GB/s (measured now)"), std::string::npos) << text;
  limits.read.note.clear();
  EXPECT_NE(limits.describe().find("read 1.50 GB/s (report)"), std::string::npos) << limits.describe();
}
