#include <gtest/gtest.h>

#include <sstream>

#include "config/config.hpp"
#include "kokkos_env.hpp"
#include "report/limits.hpp"
#include "report/report.hpp"

using namespace discount;

TEST(Report, NamesTheBusiestStageAndPrintsRates) {
  RunReport report;
  report.stages = {{"read", 2'000'000'000, 0.5, 4}, {"kernel", 4'000'000'000, 0.1, 4}, {"write", 2'000'000'000, 2.0, 4}};
  report.wall_seconds = 2.5;
  report.input_bytes = report.output_bytes = 2'000'000'000;
  ASSERT_NE(report.bottleneck(), nullptr);
  EXPECT_EQ(report.bottleneck()->name, "write");
  EXPECT_DOUBLE_EQ(report.stages[0].gb_per_s(), 4.0);
  EXPECT_DOUBLE_EQ(report.effective_gb_per_s(), 1.6);
  const std::string text = report.to_text();
  EXPECT_NE(text.find("bottleneck: write (busy 80% of the wall time)"), std::string::npos) << text;
  const std::string json = report.to_json();
  EXPECT_NE(json.find("\"bottleneck\": \"write\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"gb_per_s\": 4.0"), std::string::npos) << json;
}

TEST(Report, NoStagesNoBottleneck) {
  RunReport report;
  EXPECT_EQ(report.bottleneck(), nullptr);
  EXPECT_EQ(report.to_text().find("bottleneck"), std::string::npos);
}

namespace {

RunReport report_with_stages() {
  RunReport report;
  report.stages = {{"read", 2'000'000'000, 1.0, 4}, {"h2d", 2'000'000'000, 0.1, 4}, {"kernel", 4'000'000'000, 0.01, 4},
                   {"d2h", 2'000'000'000, 0.1, 4}, {"write", 2'000'000'000, 2.0, 4}};
  report.wall_seconds = 2.5;
  report.input_bytes = report.output_bytes = 2'000'000'000;
  return report;
}

Limits some_limits() {
  Limits limits;
  limits.read = {8.0, "configured"};   // read runs at 2 GB/s: 25%
  limits.h2d = {40.0, "measured"};     // 20 GB/s: 50%
  limits.kernel = {800.0, "measured"};  // 400 GB/s: 50%
  // d2h and write unknown
  return limits;
}

}  // namespace

TEST(ReportLimits, ApplyLimitsFillsStagesByName) {
  RunReport report = report_with_stages();
  apply_limits(report, some_limits());
  EXPECT_DOUBLE_EQ(report.stages[0].limit_gb_per_s, 8.0);
  EXPECT_EQ(report.stages[0].limit_source, "configured");
  EXPECT_DOUBLE_EQ(report.stages[0].fraction_of_limit(), 0.25);
  EXPECT_DOUBLE_EQ(report.stages[1].fraction_of_limit(), 0.5);
  EXPECT_DOUBLE_EQ(report.stages[2].fraction_of_limit(), 0.5);
  EXPECT_EQ(report.stages[2].limit_source, "measured");
  EXPECT_EQ(report.stages[3].limit_gb_per_s, 0.0);
  EXPECT_LT(report.stages[3].fraction_of_limit(), 0);
  EXPECT_LT(report.stages[4].fraction_of_limit(), 0);
  EXPECT_DOUBLE_EQ(report.limits.kernel.gb_per_s, 800.0);
  // A stage that did no timed work has no fraction.
  StageStats idle{"kernel"};
  idle.limit_gb_per_s = 100;
  EXPECT_LT(idle.fraction_of_limit(), 0);
}

TEST(ReportLimits, TextHasLimitColumnsWithDashesForUnknown) {
  RunReport report = report_with_stages();
  apply_limits(report, some_limits());
  const std::string text = report.to_text();
  EXPECT_NE(text.find("limit GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("% of limit"), std::string::npos) << text;
  EXPECT_NE(text.find("25.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("800.00"), std::string::npos) << text;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("write", 0) == 0) {
      EXPECT_EQ(line.substr(line.size() - 24), std::string(11, ' ') + "- " + std::string(10, ' ') + "-") << line;
    }
  }
  EXPECT_EQ(text.find("ranks"), std::string::npos);
  report.ranks = 4;
  EXPECT_NE(report.to_text().find("ranks: 4"), std::string::npos);
}

TEST(ReportLimits, JsonHasNumbersForKnownAndNullForUnknown) {
  RunReport report = report_with_stages();
  // Without limits every stage has nulls, the limits object is empty, ranks is 1.
  std::string json = report.to_json();
  EXPECT_NE(json.find("\"limit_gb_per_s\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fraction_of_limit\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"limits\": {}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ranks\": 1"), std::string::npos) << json;

  apply_limits(report, some_limits());
  report.ranks = 2;
  json = report.to_json();
  EXPECT_NE(json.find("\"limit_gb_per_s\": 8.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fraction_of_limit\": 0.25"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fraction_of_limit\": 0.5"), std::string::npos) << json;
  EXPECT_NE(json.find("\"limit_gb_per_s\": null"), std::string::npos) << json;  // d2h, write
  EXPECT_NE(json.find("\"ranks\": 2"), std::string::npos) << json;
  // Top-level limits: the known links only, with their source.
  const auto limits_at = json.find("\"limits\": {");
  ASSERT_NE(limits_at, std::string::npos) << json;
  const std::string limits = json.substr(limits_at, json.find("\n  }", limits_at) - limits_at);
  EXPECT_NE(limits.find("\"read\": {"), std::string::npos) << limits;
  EXPECT_NE(limits.find("\"source\": \"configured\""), std::string::npos) << limits;
  EXPECT_NE(limits.find("\"kernel\": {"), std::string::npos) << limits;
  EXPECT_NE(limits.find("\"gb_per_s\": 800.0"), std::string::npos) << limits;
  EXPECT_EQ(limits.find("\"d2h\""), std::string::npos) << limits;
  EXPECT_EQ(limits.find("\"write\""), std::string::npos) << limits;
  // The keys scripts read are still there.
  for (const char* key : {"\"name\": \"read\"", "\"bytes\":", "\"seconds\":", "\"gb_per_s\": 2.0", "\"slabs\":",
                          "\"wall_seconds\":", "\"effective_gb_per_s\":"})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

TEST(Limits, ConfiguredOnlyWhenMeasureIsOff) {
  LimitsConfig config;
  config.read = 2.5;
  config.kernel = 100.0;
  config.measure = false;
  const Limits limits = measure_limits(config, true);
  EXPECT_DOUBLE_EQ(limits.read.gb_per_s, 2.5);
  EXPECT_EQ(limits.read.source, "configured");
  EXPECT_DOUBLE_EQ(limits.kernel.gb_per_s, 100.0);
  EXPECT_FALSE(limits.h2d.known());
  EXPECT_FALSE(limits.d2h.known());
  EXPECT_FALSE(limits.write.known());
  EXPECT_EQ(limits.h2d.source, "");
  EXPECT_EQ(limits.of("kernel"), &limits.kernel);
  EXPECT_EQ(limits.of("bogus"), nullptr);
  EXPECT_NE(limits.describe().find("write unknown"), std::string::npos) << limits.describe();
}

TEST(Limits, MeasuresTheHostKernel) {
  const Limits limits = measure_limits(LimitsConfig{}, false);
  EXPECT_GT(limits.kernel.gb_per_s, 0.0);
  EXPECT_EQ(limits.kernel.source, "measured");
  EXPECT_FALSE(limits.read.known());  // disks are never measured
  EXPECT_FALSE(limits.write.known());
  EXPECT_FALSE(limits.h2d.known());   // no copies in host space
}

TEST(Limits, MeasuresTheCopyLinksAndConfiguredWins) {
  LimitsConfig config;
  config.d2h = 12.5;
  const Limits limits = measure_limits(config, true);
  EXPECT_GT(limits.h2d.gb_per_s, 0.0);
  EXPECT_EQ(limits.h2d.source, "measured");
  EXPECT_GT(limits.kernel.gb_per_s, 0.0);
  EXPECT_DOUBLE_EQ(limits.d2h.gb_per_s, 12.5);
  EXPECT_EQ(limits.d2h.source, "configured");
}

TEST(Limits, FreeDiskBytes) {
  EXPECT_GT(free_disk_bytes(DISCOUNT_SOURCE_DIR "/docs/config.md"), 0u);
  EXPECT_GT(free_disk_bytes("relative-file-in-the-working-directory.h5"), 0u);
  EXPECT_EQ(free_disk_bytes("/nonexistent/dir/out.h5"), 0u);
}
