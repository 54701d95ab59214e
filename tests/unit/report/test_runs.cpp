// A job written by several runs (report/runs.hpp).
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

// ---- a job written by several runs (report/runs.hpp) ------------------------

namespace {

RunRecord record(int run, int ranks, double seconds) {
  RunRecord r;
  r.run = run;
  r.ranks = ranks;
  r.seconds = seconds;
  r.start_time = "2026-12-01T03:4" + std::to_string(run) + ":00Z";
  r.end_time = "2026-12-01T03:4" + std::to_string(run) + ":30Z";
  r.host = "node" + std::to_string(run);
  return r;
}

// Ten units in slabs of two; output 100 bytes a unit, input 110, resident 7.
RunGeometry ten_units() {
  RunGeometry g;
  for (int s = 0; s < 5; ++s) g.slab_units.emplace_back(2 * s, 2 * s + 2);
  g.output_bytes_per_unit = 100;
  g.input_bytes_per_unit = 110;
  g.resident_input_bytes = 7;
  return g;
}

}  // namespace

TEST(JobRuns, EachDoneUnitBelongsToTheRunThatWroteIt) {
  RunHistory h;
  h.records = {record(1, 1, 3.0), record(2, 2, 4.0)};
  // Units 4-5 are in no range (never recorded as done): nobody's. Run 2's
  // ranges lie between run 1's. Unit 2-3 were written by run 1 first, then
  // recomputed by run 2 (a slab of its plan partly covered): run 2's.
  h.ranges = {{0, 4, 1}, {8, 10, 1}, {2, 4, 2}, {6, 8, 2}};
  const auto runs = job_runs(h, ten_units());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].record.run, 1);
  EXPECT_EQ(runs[0].record.host, "node1");
  EXPECT_EQ(runs[0].units, (std::vector<UnitRange>{{0, 2}, {8, 10}}));
  EXPECT_EQ(runs[0].unit_count, 4);
  EXPECT_EQ(runs[0].slabs, (std::vector<int>{0, 4}));
  EXPECT_EQ(runs[0].output_bytes, 400u);
  EXPECT_EQ(runs[0].input_bytes, 4 * 110u + 1 * 7u);
  EXPECT_EQ(runs[1].units, (std::vector<UnitRange>{{2, 4}, {6, 8}}));
  EXPECT_EQ(runs[1].slabs, (std::vector<int>{1, 3}));
  EXPECT_EQ(runs[1].input_bytes, 4 * 110u + 2 * 7u);  // each of its two ranks read the resident multBy
}

TEST(JobRuns, RunsWithoutUnitsAndUnitsWithoutARecord) {
  RunHistory h;
  h.records = {record(1, 1, 0.5), record(3, 1, 2.0)};  // run 2 left no record (killed before it began)
  h.ranges = {{0, 2, 3}, {2, 3, 2}, {3, 4, 0}};        // unit 3: no run known
  const auto runs = job_runs(h, ten_units());
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].record.run, 0);
  EXPECT_EQ(runs[0].units, (std::vector<UnitRange>{{3, 4}}));
  EXPECT_EQ(runs[1].record.run, 1);  // killed before its first checkpoint: listed, no units
  EXPECT_TRUE(runs[1].units.empty());
  EXPECT_EQ(runs[1].input_bytes, 7u);
  EXPECT_EQ(runs[2].record.run, 2);
  EXPECT_TRUE(runs[2].record.start_time.empty());
  EXPECT_EQ(runs[2].units, (std::vector<UnitRange>{{2, 3}}));
  EXPECT_TRUE(runs[2].slabs.empty());  // slab 1 is split between runs 2 and 0
  EXPECT_EQ(runs[3].units, (std::vector<UnitRange>{{0, 2}}));
  // Without ranges nothing is done.
  h.ranges.clear();
  const auto none = job_runs(h, ten_units());
  ASSERT_EQ(none.size(), 2u);
  EXPECT_EQ(none[0].unit_count + none[1].unit_count, 0);
}

TEST(JobRuns, ReportTotalsCountEveryRunAndKeepThisRunsOwn) {
  RunReport report;
  report.stages = {{"read", 447, 0.5, 2}, {"kernel", 800, 0.1, 2}, {"write", 400, 1.0, 2}};
  report.input_bytes = 447;
  report.output_bytes = 400;
  report.wall_seconds = 2.0;
  report.slabs_total = 5;
  report.slabs_run = 2;
  report.slabs_skipped = 3;
  RunHistory h;
  h.records = {record(1, 1, 3.0), record(2, 1, 4.0)};
  h.ranges = {{0, 6, 1}, {6, 10, 2}};
  h.unit_axis = "date";
  report.runs = job_runs(h, ten_units());
  report.run = 2;
  report.unit_axis = h.unit_axis;
  EXPECT_EQ(report.job_output_bytes(), 1000u);
  EXPECT_EQ(report.job_input_bytes(), 10 * 110u + 2 * 7u);
  EXPECT_DOUBLE_EQ(report.effective_gb_per_s(), (447 + 400) / 2.0 / 1e9);  // this run's
  const auto json = nlohmann::json::parse(report.to_json());
  EXPECT_EQ(json["output_bytes"], 1000);
  EXPECT_EQ(json["input_bytes"], 1114);
  EXPECT_EQ(json["this_run"]["run"], 2);
  EXPECT_EQ(json["this_run"]["output_bytes"], 400);
  EXPECT_EQ(json["this_run"]["input_bytes"], 447);
  EXPECT_EQ(json["this_run"]["wall_seconds"], 2.0);
  ASSERT_EQ(json["runs"].size(), 2u);
  EXPECT_EQ(json["runs"][0]["units"], nlohmann::json::parse("[[0, 6]]"));
  EXPECT_EQ(json["runs"][0]["slabs"], nlohmann::json::parse("[0, 1, 2]"));
  EXPECT_EQ(json["runs"][0]["this_run"], false);
  EXPECT_EQ(json["runs"][1]["slabs"], nlohmann::json::parse("[3, 4]"));
  EXPECT_EQ(json["runs"][1]["this_run"], true);
  EXPECT_EQ(json["runs"][1]["host"], "node2");
  EXPECT_EQ(json["runs"][1]["unit_axis"], "date");
  const std::string text = report.to_text();
  EXPECT_NE(text.find("job: 2 runs (this is run 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("run 1: 6 date(s)"), std::string::npos) << text;
}

TEST(JobRuns, AFreshRunsTotalsAreItsOwn) {
  RunReport report;
  report.input_bytes = 1107;
  report.output_bytes = 1000;
  EXPECT_EQ(report.job_input_bytes(), 1107u);  // no record (checksum sink): this run's
  RunHistory h;
  h.records = {record(1, 1, 3.0)};
  h.ranges = {{0, 10, 1}};
  report.runs = job_runs(h, ten_units());
  report.run = 1;
  EXPECT_EQ(report.job_input_bytes(), 1107u);
  EXPECT_EQ(report.job_output_bytes(), 1000u);
  EXPECT_EQ(report.to_text().find("job:"), std::string::npos);
}
