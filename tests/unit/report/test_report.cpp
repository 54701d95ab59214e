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

// The input's decoding: a JSON object and a summary line only when chunks
// were decoded; the output's compression gets its per-thread rate and limit.
TEST(Report, DecompressionAndCompressionRates) {
  RunReport report;
  EXPECT_EQ(report.to_text().find("decompression"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(report.to_json());
  EXPECT_FALSE(j.contains("decompression"));
  EXPECT_FALSE(j.contains("compression"));

  report.decompression.pipeline = "shuffle + deflate 4";
  report.decompression.stored_bytes = 1'000'000'000;
  report.decompression.raw_bytes = 2'000'000'000;
  report.decompression.chunks = 1000;
  report.decompression.decode_busy_seconds = 4.0;
  report.decompression.read_busy_seconds = 0.5;
  report.decompression.threads = 8;
  report.compression.codec = "lz4";
  report.compression.raw_bytes = 3'000'000'000;
  report.compression.stored_bytes = 2'000'000'000;
  report.compression.seconds = 1.0;
  report.compression.busy_seconds = 3.0;
  report.compression.threads = 4;
  j = nlohmann::json::parse(report.to_json());
  const nlohmann::json& d = j.at("decompression");
  EXPECT_EQ(d.at("pipeline"), "shuffle + deflate 4");
  EXPECT_EQ(d.at("stored_bytes"), 1'000'000'000U);
  EXPECT_EQ(d.at("raw_bytes"), 2'000'000'000U);
  EXPECT_EQ(d.at("chunks"), 1000U);
  EXPECT_EQ(d.at("threads"), 8U);
  EXPECT_DOUBLE_EQ(d.at("ratio").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(d.at("busy_seconds").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(d.at("read_busy_seconds").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(d.at("thread_rate_bytes_per_s").get<double>(), 5e8);
  EXPECT_DOUBLE_EQ(d.at("limit_bytes_per_s").get<double>(), 4e9);
  const nlohmann::json& z = j.at("compression");
  EXPECT_DOUBLE_EQ(z.at("thread_rate_bytes_per_s").get<double>(), 1e9);
  EXPECT_DOUBLE_EQ(z.at("limit_bytes_per_s").get<double>(), 4e9);
  const std::string text = report.to_text();
  EXPECT_NE(text.find("decompression  shuffle + deflate 4: 1.00 GB -> 2.00 GB, 4.00 s busy on 8 threads (500 MB/s "
                      "per thread, limit 4.00 GB/s)\n"),
            std::string::npos)
      << text;
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
