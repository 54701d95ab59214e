#include <gtest/gtest.h>

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
