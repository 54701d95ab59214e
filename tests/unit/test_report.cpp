#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "config/config.hpp"
#include "kokkos_env.hpp"
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

TEST(Report, NamesTheBusiestStageAndPrintsRates) {
  RunReport report;
  report.stages = {
      {"read", 2'000'000'000, 0.5, 4}, {"kernel", 4'000'000'000, 0.1, 4}, {"write", 2'000'000'000, 2.0, 4}};
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
  report.stages = {{"read", 2'000'000'000, 1.0, 4},
                   {"h2d", 2'000'000'000, 0.1, 4},
                   {"kernel", 4'000'000'000, 0.01, 4},
                   {"d2h", 2'000'000'000, 0.1, 4},
                   {"write", 2'000'000'000, 2.0, 4}};
  report.wall_seconds = 2.5;
  report.input_bytes = report.output_bytes = 2'000'000'000;
  return report;
}

Limits some_limits() {
  Limits limits;
  limits.read = {8.0, LinkSource::configured};    // read runs at 2 GB/s: 25%
  limits.h2d = {40.0, LinkSource::measured};      // 20 GB/s: 50%
  limits.kernel = {800.0, LinkSource::measured};  // 400 GB/s: 50%
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

// A multiply done piece by piece in cache (fused, memory.staging: none) is
// held against no limit: the kernel's limit is a memory-bound pass.
TEST(ReportLimits, KernelOnPiecesHasNoLimit) {
  RunReport report = report_with_stages();
  report.kernel_on_pieces = true;
  apply_limits(report, some_limits());
  EXPECT_EQ(report.stages[2].name, "kernel");
  EXPECT_EQ(report.stages[2].limit_gb_per_s, 0.0);
  EXPECT_LT(report.stages[2].fraction_of_limit(), 0);
  EXPECT_DOUBLE_EQ(report.stages[0].limit_gb_per_s, 8.0);  // the other stages keep theirs
  EXPECT_DOUBLE_EQ(report.limits.kernel.gb_per_s, 800.0);
  const std::string text = report.to_text();
  EXPECT_NE(text.find("kernel: each piece multiplied in cache right after its read, so the kernel's limit "
                      "(800.00 GB/s, data from memory) does not apply"),
            std::string::npos)
      << text;
  EXPECT_EQ(nlohmann::json::parse(report.to_json())["kernel_on_pieces"], true);
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
  for (const char* key : {"\"name\": \"read\"", "\"bytes\":", "\"seconds\":", "\"gb_per_s\": 2.0",
                          "\"slabs\":", "\"wall_seconds\":", "\"effective_gb_per_s\":"})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

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

// schema_version 2: input, plan and config are objects; the text forms stay
// inside them, and plan's reader of an earlier report (report/rates.hpp)
// still finds the input line.
TEST(Report, Schema2WritesStructuredInputPlanAndConfig) {
  RunReport report;
  report.host = "node7";
  report.input = "in.h5 (multBy [7 x 3] float64, discount [7 x 5 x 3] float32 [id,date,num], positional reads)";
  report.output = "out/cv.h5 (dataset 'cv', O_DIRECT writes)";
  report.space = "OpenMP";
  report.kernel = "mdrange";
  report.slicing = "parallel over date id num";
  report.plan = "shape          dates=4 ids=7 nums=3 (float64)\n";
  report.config_yaml =
      "input:\n  file: \"007\"\n  axes: [id, date, num]\n  dates: [1, 5]\nmemory:\n"
      "  host_budget: 16GiB\n  max_slab: 4096\noutput:\n  overwrite: true\n  checkpoint_seconds: 2.5\n";
  report.input_facts.source = "hdf5";
  report.input_facts.datasets = {
      {"multiplier", "multBy", "in.h5", {7, 3}, {"id", "num"}, "float64", "positional reads"},
      {"discount", "discount", "in.h5", {7, 5, 3}, {"id", "date", "num"}, "float32", "HDF5 reads (float32 converted)"}};
  report.input_facts.axes = {"id", "date", "num"};
  report.input_facts.dates = 5;
  report.input_facts.ids = 7;
  report.input_facts.nums = 3;
  report.input_facts.dates_selected = {1, 5};
  report.input_facts.ids_selected = {0, 7};
  PlanRequest request;
  request.dates = 4;
  request.ids = 7;
  request.nums = 3;
  request.chunk_axis = Axis::id;
  request.chunk_axis_reason = "set in the YAML";
  request.host_budget = std::uint64_t{64} << 20;
  request.max_slab = 4 * 3 * 8 * 3;  // three ids of every date
  report.plan_facts = make_plan(request);
  report.has_plan_facts = true;
  report.stages = {{"read", 1000, 0.5, 3}};

  const auto j = nlohmann::json::parse(report.to_json());
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["input"]["text"], report.input);
  EXPECT_EQ(j["input"]["files"], nlohmann::json::parse(R"(["in.h5"])"));
  EXPECT_EQ(j["input"]["layout"], "id,date,num");
  EXPECT_EQ(j["input"]["datasets"]["discount"]["dtype"], "float32");
  EXPECT_EQ(j["input"]["datasets"]["discount"]["shape"], nlohmann::json::parse("[7, 5, 3]"));
  EXPECT_EQ(j["input"]["selection"]["dates"], nlohmann::json::parse("[1, 5]"));
  EXPECT_EQ(j["plan"]["chunk_axis"], "id");
  EXPECT_EQ(j["plan"]["slabs"], 3);  // ids 3 + 3 + 1
  EXPECT_EQ(j["plan"]["slab_extent"], 3);
  EXPECT_EQ(j["plan"]["slab_bytes"], 4 * 3 * 3 * 8);
  EXPECT_EQ(j["plan"]["buffers"]["device"], 0);
  EXPECT_EQ(j["plan"]["output_bytes"], 4 * 7 * 3 * 8);
  EXPECT_EQ(j["plan"]["text"], report.plan);
  // The config object: typed numbers and booleans, sizes as written, quoted scalars strings.
  EXPECT_EQ(j["config"]["input"]["file"], "007");
  EXPECT_EQ(j["config"]["input"]["dates"], nlohmann::json::parse("[1, 5]"));
  EXPECT_EQ(j["config"]["memory"]["host_budget"], "16GiB");
  EXPECT_EQ(j["config"]["memory"]["max_slab"], 4096);
  EXPECT_EQ(j["config"]["output"]["overwrite"], true);
  EXPECT_EQ(j["config"]["output"]["checkpoint_seconds"], 2.5);
  EXPECT_EQ(j["config_yaml"], report.config_yaml);

  ReportExpectation expect;
  expect.host = report.host;
  expect.input = report.input;
  expect.output_path = "out/cv.h5";
  expect.space = report.space;
  expect.kernel = report.kernel;
  expect.slicing = report.slicing;
  const EarlierReport earlier = earlier_report_from_json(report.to_json(), expect);
  EXPECT_TRUE(earlier.usable) << earlier.why_not;
  expect.input = "other.h5";
  EXPECT_FALSE(earlier_report_from_json(report.to_json(), expect).usable);
}

// Every key of the effective configuration reaches the JSON object with the value to_yaml prints.
TEST(Report, ConfigJsonHoldsEveryKeyOfToYaml) {
  Config config;
  config.input.file = "data/in.h5";
  config.output.file = "out/cv.h5";
  const auto j = nlohmann::json::parse(config_to_json(config));
  const YAML::Node yaml = YAML::Load(config.to_yaml());
  ASSERT_TRUE(j.is_object());
  std::size_t keys = 0;
  for (const auto& section : yaml) {
    const std::string name = section.first.as<std::string>();
    ASSERT_TRUE(j.contains(name)) << name;
    if (!section.second.IsMap()) continue;
    for (const auto& kv : section.second) {
      ++keys;
      EXPECT_TRUE(j[name].contains(kv.first.as<std::string>())) << name << "." << kv.first.as<std::string>();
    }
  }
  EXPECT_GT(keys, 20u);
  EXPECT_EQ(j["input"]["file"], "data/in.h5");
  EXPECT_EQ(j["compute"]["parallel_dims"], nlohmann::json::parse(R"(["date", "id", "num"])"));
  EXPECT_EQ(j["memory"]["pipeline_depth"], 3);
  EXPECT_EQ(j["output"]["direct_io"], true);
  EXPECT_EQ(nlohmann::json::parse(yaml_to_json("a: \"true\"\nb: ~\nc: -1.5e3\nd: 12abc\n")),
            nlohmann::json::parse(R"({"a": "true", "b": null, "c": -1500.0, "d": "12abc"})"));
  EXPECT_THROW(yaml_to_json("a: [1, 2"), Error);
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
