// The earlier report plan takes its rates from (lib/probe/earlier_report.hpp): only a
// report of the same job on this host counts, and only the stages it can vouch for.
#include <gtest/gtest.h>

#include <string>

#include "probe/earlier_report.hpp"

using namespace discount;

namespace {

ReportExpectation expectation() {
  ReportExpectation e;
  e.host = "node7";
  e.input = "data/in.h5 (multBy [100 x 5] float64, discount [60 x 100 x 5] float64 [date,id,num], positional reads)";
  e.output_path = "out/cv.h5";
  e.space = "OpenMP";
  e.kernel = "mdrange";
  e.slicing = "parallel over date id num";
  return e;
}

// A report as report/report.cpp writes it, with the fields plan reads.
std::string report_json(const std::string& host = "node7", const std::string& output = "out/cv.h5",
                        const std::string& slicing = "parallel over date id num", int skipped = 0) {
  const ReportExpectation e = expectation();
  return R"J({"host": ")J" + host + R"J(", "input": ")J" + e.input + R"J(", "output": ")J" + output +
         R"J( (dataset 'cv', O_DIRECT writes)", "space": "OpenMP", "kernel": "mdrange", "slicing": ")J" + slicing +
         R"J(", "outcome": "complete", "wall_seconds": 2.5, "any_stage_seconds": 2.0,
      "slabs": {"total": 15, "run": 15, "skipped_resumed": )J" +
         std::to_string(skipped) + R"J(},
      "stages": [{"name": "read", "bytes": 3000000000, "seconds": 1.5},
                 {"name": "kernel", "bytes": 6000000000, "seconds": 0.5},
                 {"name": "write", "bytes": 3000000000, "seconds": 2.0}]})J";
}

}  // namespace

TEST(EarlierReport, TheSameJobGivesEveryStagesRateAndTheTimeInNoStage) {
  const EarlierReport r = earlier_report_from_json(report_json(), expectation());
  ASSERT_TRUE(r.usable) << r.why_not;
  EXPECT_DOUBLE_EQ(r.rates.read.gb_per_s, 2.0);
  EXPECT_DOUBLE_EQ(r.rates.kernel.gb_per_s, 12.0);
  EXPECT_DOUBLE_EQ(r.rates.write.gb_per_s, 1.5);
  EXPECT_FALSE(r.rates.h2d.known());
  EXPECT_DOUBLE_EQ(r.outside_stages, 0.5);
}

TEST(EarlierReport, AnotherHostInputOrFolderIsNotUsed) {
  EarlierReport r = earlier_report_from_json(report_json("node8"), expectation());
  EXPECT_FALSE(r.usable);
  EXPECT_NE(r.why_not.find("host 'node8'"), std::string::npos) << r.why_not;
  ReportExpectation other = expectation();
  other.input = "data/other.h5 (...)";
  r = earlier_report_from_json(report_json(), other);
  EXPECT_FALSE(r.usable);
  EXPECT_NE(r.why_not.find("input differs"), std::string::npos) << r.why_not;
  r = earlier_report_from_json(report_json("node7", "elsewhere/cv.h5"), expectation());
  EXPECT_FALSE(r.usable);
  EXPECT_NE(r.why_not.find("output folder"), std::string::npos) << r.why_not;
  // Another file name in the same folder is the same disk: used.
  EXPECT_TRUE(earlier_report_from_json(report_json("node7", "out/other_cv.h5"), expectation()).usable);
  EXPECT_FALSE(earlier_report_from_json("{not json", expectation()).usable);
}

TEST(EarlierReport, AnotherKernelKeepsOnlyTheDiskRates) {
  const EarlierReport r =
      earlier_report_from_json(report_json("node7", "out/cv.h5", "parallel over id"), expectation());
  ASSERT_TRUE(r.usable);
  EXPECT_TRUE(r.rates.read.known());
  EXPECT_TRUE(r.rates.write.known());
  EXPECT_FALSE(r.rates.kernel.known());
}

TEST(EarlierReport, AResumedRunsTimeInNoStageIsNotTheJobs) {
  const EarlierReport r =
      earlier_report_from_json(report_json("node7", "out/cv.h5", "parallel over date id num", 4), expectation());
  ASSERT_TRUE(r.usable);
  EXPECT_LT(r.outside_stages, 0);
}
