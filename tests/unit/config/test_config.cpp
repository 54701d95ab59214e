#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "common/error.hpp"
#include "common/quote.hpp"
#include "common/threads.hpp"
#include "config/config.hpp"
#include "config/config_file.hpp"

using namespace discount;

#include "support/config_text.hpp"

using namespace discount::test_support;

TEST(Config, MinimalHasDocumentedDefaults) {
  Config c = parse(kMinimal);
  EXPECT_EQ(c.input.file, "in.h5");
  EXPECT_EQ(c.input.multiplier, "multBy");
  EXPECT_EQ(c.input.discount, "discount");
  EXPECT_EQ(c.input.axes, (std::array<Axis, 3>{Axis::date, Axis::id, Axis::num}));
  EXPECT_FALSE(c.input.dates.has_value());
  EXPECT_EQ(c.input.nonfinite, NonFinite::error);
  EXPECT_EQ(c.output.dataset, "cv");
  EXPECT_FALSE(c.output.overwrite);
  EXPECT_EQ(c.compute.space, Space::device);
  EXPECT_EQ(c.compute.kernel, KernelKind::automatic);
  EXPECT_EQ(c.compute.parallel_dims.size(), 3u);
  EXPECT_TRUE(c.compute.tile.empty());
  EXPECT_TRUE(c.memory.device_budget.is_percent);
  EXPECT_DOUBLE_EQ(c.memory.device_budget.percent, 80.0);
  EXPECT_DOUBLE_EQ(c.memory.host_budget.percent, 25.0);
  EXPECT_FALSE(c.memory.chunk_axis.has_value());  // auto: resolve picks date or id
  EXPECT_EQ(c.memory.pipeline_depth, 3);
  EXPECT_EQ(c.verify, VerifyMode::none);
}

TEST(Config, FullContractParses) {
  Config c = parse(R"(
input:
  file: /data/p.h5
  multiplier: m
  discount: d
  axes: [id, date, num]
  dates: [2, 100]
  ids: [0, 4000]
  nonfinite: propagate
output:
  file: /r/cv.h5
  dataset: out
  overwrite: true
compute:
  space: host
  kernel: blas
  parallel_dims: [id, num]
  tile: [64, 5]
memory:
  device_budget: 16GiB
  host_budget: 512MiB
  chunk_axis: id
  pipeline_depth: 4
verify: sample
report: run.json
)");
  EXPECT_EQ(c.input.axes, (std::array<Axis, 3>{Axis::id, Axis::date, Axis::num}));
  EXPECT_EQ(c.input.dates->begin, 2);
  EXPECT_EQ(c.input.dates->end, 100);
  EXPECT_EQ(c.input.ids->end, 4000);
  EXPECT_EQ(c.input.nonfinite, NonFinite::propagate);
  EXPECT_TRUE(c.output.overwrite);
  EXPECT_EQ(c.compute.space, Space::host);
  EXPECT_EQ(c.compute.kernel, KernelKind::blas);
  EXPECT_EQ(c.compute.parallel_dims, (std::vector<Axis>{Axis::id, Axis::num}));
  EXPECT_EQ(c.compute.tile, (std::vector<std::int64_t>{64, 5}));
  EXPECT_EQ(c.memory.device_budget.bytes, std::uint64_t{16} << 30);
  EXPECT_EQ(c.memory.host_budget.bytes, std::uint64_t{512} << 20);
  EXPECT_EQ(c.memory.chunk_axis, Axis::id);
  EXPECT_EQ(c.memory.pipeline_depth, 4);
  EXPECT_EQ(c.verify, VerifyMode::sample);
  EXPECT_EQ(c.report, "run.json");
}

TEST(Config, KernelNamesParseAndPrintBack) {
  for (const auto& [name, kind] : std::vector<std::pair<std::string, KernelKind>>{{"auto", KernelKind::automatic},
                                                                                  {"mdrange", KernelKind::mdrange},
                                                                                  {"blas", KernelKind::blas},
                                                                                  {"fused", KernelKind::fused}}) {
    const Config c = parse("input: {file: a}\noutput: {file: b}\ncompute: {kernel: " + name + "}\n");
    EXPECT_EQ(c.compute.kernel, kind) << name;
    EXPECT_EQ(kernel_name(kind), name);
    EXPECT_NE(c.to_yaml().find("kernel: " + name), std::string::npos) << c.to_yaml();
  }
}

TEST(Config, StagingNamesParseAndPrintBack) {
  for (const auto& [name, staging] : std::vector<std::pair<std::string, Staging>>{
           {"auto", Staging::automatic}, {"ring", Staging::ring}, {"none", Staging::none}}) {
    const Config c = parse("input: {file: a}\noutput: {file: b}\nmemory: {staging: " + name + "}\n");
    EXPECT_EQ(c.memory.staging, staging) << name;
    EXPECT_EQ(staging_name(staging), name);
    EXPECT_NE(c.to_yaml().find("staging: " + name), std::string::npos) << c.to_yaml();
  }
  EXPECT_EQ(parse("input: {file: a}\noutput: {file: b}\n").memory.staging, Staging::automatic);
}

TEST(Config, RelativePathsResolveAgainstTheConfigDirectory) {
  Config c = parse_config(kMinimal, "jobs/a/job.yaml");
  EXPECT_EQ(c.input.file, "jobs/a/in.h5");
  EXPECT_EQ(c.output.file, "jobs/a/out.h5");
  Config absolute = parse_config("input: {file: /x/in.h5}\noutput: {file: /y/out.h5}\n", "jobs/job.yaml");
  EXPECT_EQ(absolute.input.file, "/x/in.h5");
}

TEST(Config, RoundTripsThroughItsOwnYaml) {
  Config c = parse(
      "input: {file: /a.h5, axes: [id, date, num], ids: [3, 9]}\noutput: {file: /b.h5}\n"
      "compute: {parallel_dims: [date], tile: [7]}\nmemory: {host_budget: 10%, chunk_axis: id}\n");
  Config again = parse_config(c.to_yaml(), "again.yaml");
  EXPECT_EQ(again.to_yaml(), c.to_yaml());
  EXPECT_EQ(again.input.axes, c.input.axes);
  EXPECT_EQ(again.input.ids->begin, 3);
  EXPECT_EQ(again.compute.tile, (std::vector<std::int64_t>{7}));
  EXPECT_DOUBLE_EQ(again.memory.host_budget.percent, 10.0);
}

TEST(Config, SyntheticSourceAndChecksumSink) {
  Config c = parse("input: {synthetic: {dates: 200, ids: 10000000, nums: 5, seed: 9}}\noutput: {mode: checksum}\n");
  ASSERT_TRUE(c.input.synthetic.has_value());
  EXPECT_EQ(c.input.synthetic->ids, 10000000);
  EXPECT_EQ(c.input.synthetic->seed, 9u);
  EXPECT_EQ(c.output.mode, OutputMode::checksum);
}

struct BadConfig {
  const char* name;
  const char* yaml;
  const char* where;    // expected "file:line:col" prefix
  const char* message;  // expected substring
};

class ConfigErrors : public ::testing::TestWithParam<BadConfig> {};

TEST_P(ConfigErrors, NameFileLineColumnAndExitWith78) {
  const auto& bad = GetParam();
  auto [code, message] = error_of(bad.yaml);
  EXPECT_EQ(code, ExitCode::config) << message;
  EXPECT_EQ(message.rfind(bad.where, 0), 0u) << message;
  EXPECT_NE(message.find(bad.message), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ConfigErrors,
    ::testing::Values(
        BadConfig{"syntax", "input: {file: in.h5\noutput: {file: o.h5}\n", "job.yaml:", "YAML syntax error"},
        BadConfig{"unknown_top", "input: {file: a}\noutput: {file: b}\ncompte: {}\n", "job.yaml:3:1",
                  "did you mean 'compute'"},
        BadConfig{"unknown_nested", "input: {file: a, multiplyer: m}\noutput: {file: b}\n", "job.yaml:1:18",
                  "unknown key 'multiplyer' in 'input'"},
        BadConfig{"missing_input_file", "input: {}\noutput: {file: b}\n", "job.yaml:1:8", "input.file"},
        BadConfig{"missing_output", "input: {file: a}\n", "job.yaml:1:1", "missing required section 'output'"},
        BadConfig{"bool_type", "input: {file: a}\noutput: {file: b, overwrite: maybe}\n", "job.yaml:2:30",
                  "true or false"},
        BadConfig{"int_type", "input: {file: a}\noutput: {file: b}\nmemory: {pipeline_depth: three}\n", "job.yaml:3:26",
                  "must be an integer"},
        BadConfig{"depth_range", "input: {file: a}\noutput: {file: b}\nmemory: {pipeline_depth: 0}\n", "job.yaml:3:26",
                  "out of range"},
        BadConfig{"space_value", "input: {file: a}\noutput: {file: b}\ncompute: {space: gpu}\n", "job.yaml:3:18",
                  "device | host"},
        BadConfig{"axes_repeat", "input: {file: a, axes: [date, date, num]}\noutput: {file: b}\n", "job.yaml:1:31",
                  "twice"},
        BadConfig{"axes_short", "input: {file: a, axes: [date, id]}\noutput: {file: b}\n", "job.yaml:1:24",
                  "all three axes"},
        BadConfig{"range_empty", "input: {file: a, dates: [5, 5]}\noutput: {file: b}\n", "job.yaml:1:25", "empty"},
        BadConfig{"tile_count",
                  "input: {file: a}\noutput: {file: b}\ncompute: {parallel_dims: [date, id], tile: [4]}\n",
                  "job.yaml:3:44", "one size per parallel dim"},
        BadConfig{"tile_threads", "input: {file: a}\noutput: {file: b}\ncompute: {tile: [64, 64, 5]}\n",
                  "job.yaml:3:17", "at most 1024"},
        BadConfig{"budget_unit", "input: {file: a}\noutput: {file: b}\nmemory: {host_budget: 12XB}\n", "job.yaml:3:23",
                  "unknown unit"},
        BadConfig{"budget_percent", "input: {file: a}\noutput: {file: b}\nmemory: {host_budget: 150%}\n",
                  "job.yaml:3:23", "(0, 100]"},
        BadConfig{"chunk_num", "input: {file: a}\noutput: {file: b}\nmemory: {chunk_axis: num}\n", "job.yaml:3:22",
                  "auto | date | id"},
        BadConfig{"tab_indent", "input:\n\tfile: a\noutput: {file: b}\n",
                  "job.yaml:2:1:", "a tab character; YAML indents with spaces"},
        BadConfig{"tab_after_spaces", "input:\n  file: a\n  \tdiscount: d\noutput: {file: b}\n",
                  "job.yaml:3:3:", "a tab character"},
        BadConfig{"not_a_map", "- just\n- a list\n", "job.yaml:1:1", "mapping"},
        BadConfig{"checkpoint_negative", "input: {file: a}\noutput: {file: b, checkpoint_seconds: -1}\n",
                  "job.yaml:2:39", "between 0"},
        BadConfig{"ranks_timeout_negative", "input: {file: a}\noutput: {file: b}\nranks: {timeout: -5}\n",
                  "job.yaml:3:18", "between 0 (no limit) and 604800"},
        BadConfig{"ranks_timeout_word", "input: {file: a}\noutput: {file: b}\nranks: {timeout: soon}\n",
                  "job.yaml:3:18", "a number of seconds"},
        BadConfig{"ranks_unknown_key", "input: {file: a}\noutput: {file: b}\nranks: {timeout_s: 5}\n", "job.yaml:3:9",
                  "did you mean 'timeout'"},
        BadConfig{"limits_unknown_key", "input: {file: a}\noutput: {file: b}\nlimits: {reed: 2}\n", "job.yaml:3:10",
                  "did you mean 'read'"},
        BadConfig{"limits_negative", "input: {file: a}\noutput: {file: b}\nlimits: {read: -1}\n", "job.yaml:3:16",
                  "positive"},
        BadConfig{"limits_negative_string", "input: {file: a}\noutput: {file: b}\nlimits: {h2d: -2.5GB/s}\n",
                  "job.yaml:3:15", "positive"},
        BadConfig{"limits_zero", "input: {file: a}\noutput: {file: b}\nlimits: {kernel: 0}\n", "job.yaml:3:18",
                  "positive"},
        BadConfig{"limits_unit", "input: {file: a}\noutput: {file: b}\nlimits: {write: 2.5GB}\n", "job.yaml:3:17",
                  "unknown unit"},
        BadConfig{"limits_text", "input: {file: a}\noutput: {file: b}\nlimits: {d2h: fast}\n", "job.yaml:3:15", "GB/s"},
        BadConfig{"limits_disk_auto", "input: {file: a}\noutput: {file: b}\nlimits: {read: auto}\n", "job.yaml:3:16",
                  "not measured"},
        BadConfig{"limits_measure_bool", "input: {file: a}\noutput: {file: b}\nlimits: {measure: often}\n",
                  "job.yaml:3:19", "true or false"},
        BadConfig{"limits_not_map", "input: {file: a}\noutput: {file: b}\nlimits: 5\n", "job.yaml:3:9", "mapping"},
        BadConfig{"compression_codec", "input: {file: a}\noutput: {file: b, compression: {codec: brotli}}\n",
                  "job.yaml:2:40", "none | deflate"},
        BadConfig{"compression_lz4_level", "input: {file: a}\noutput: {file: b, compression: {codec: lz4, level: 3}}\n",
                  "job.yaml:2:52", "no levels"},
        BadConfig{"compression_bit_deflate",
                  "input: {file: a}\noutput: {file: b, compression: {codec: deflate, shuffle: bit}}\n", "job.yaml:2:58",
                  "needs codec: blosc"},
        BadConfig{"compression_chunks",
                  "input: {file: a}\noutput: {file: b, compression: {codec: zstd, chunks: [1, 2]}}\n", "job.yaml:2:54",
                  "list of 3 extents"},
        BadConfig{"synthetic_and_file", "input: {file: a, synthetic: {dates: 1, ids: 1, nums: 1}}\noutput: {file: b}\n",
                  "job.yaml:1:15", "exclude each other"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Config, CompressionParsesWithDefaultsAndPrintsBack) {
  const Config none = parse("input: {file: a}\noutput: {file: b}\n");
  EXPECT_FALSE(none.output.compression.enabled());
  EXPECT_EQ(none.to_yaml().find("compression"), std::string::npos);
  const Config z = parse("input: {file: a}\noutput: {file: b, compression: {codec: gzip, chunks: [1, 4096, 5]}}\n");
  EXPECT_EQ(z.output.compression.codec, Codec::deflate);
  EXPECT_EQ(z.output.compression.level, -1);
  EXPECT_EQ(default_level(Codec::deflate), 4);
  EXPECT_EQ(z.output.compression.shuffle, ShuffleKind::byte);
  EXPECT_EQ(z.output.compression.chunks, (std::vector<std::int64_t>{1, 4096, 5}));
  const Config again = parse_config(z.to_yaml(), "again.yaml");
  EXPECT_EQ(again.to_yaml(), z.to_yaml());
  EXPECT_NE(z.to_yaml().find("level: 4"), std::string::npos) << z.to_yaml();
  const Config b = parse("input: {file: a}\noutput: {file: b, compression: {codec: blosc, level: 9, shuffle: bit}}\n");
  EXPECT_EQ(b.output.compression.level, 9);
  EXPECT_EQ(b.output.compression.shuffle, ShuffleKind::bit);
}

TEST(Config, ChunkAxisAutoDateOrId) {
  const auto axis_of = [](const char* value) {
    return parse(std::string(kMinimal) + "memory: {chunk_axis: " + value + "}\n").memory.chunk_axis;
  };
  EXPECT_FALSE(axis_of("auto").has_value());
  EXPECT_EQ(axis_of("date"), std::optional<Axis>(Axis::date));
  EXPECT_EQ(axis_of("id"), std::optional<Axis>(Axis::id));
  // `discount_app config` prints the choice, auto included, and reads it back.
  const Config c = parse(kMinimal);
  EXPECT_NE(c.to_yaml().find("chunk_axis: auto\n"), std::string::npos) << c.to_yaml();
  EXPECT_FALSE(parse_config(c.to_yaml(), "again.yaml").memory.chunk_axis.has_value());
  const Config id = parse(std::string(kMinimal) + "memory: {chunk_axis: id}\n");
  EXPECT_NE(id.to_yaml().find("chunk_axis: id\n"), std::string::npos);
}

// A tab breaks the YAML: the message names the tab where it is, not what
// yaml-cpp makes of it further on ("illegal map value").
TEST(Config, TabIsNamedWithItsLineAndColumn) {
  auto [code, message] = error_of("input:\n  file: a\noutput:\n\tfile: b\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_EQ(message, "job.yaml:4:1: a tab character; YAML indents with spaces (replace the tab with spaces)");
  // After a key on a line whose value is fine, then a broken nesting.
  std::tie(code, message) = error_of("input:\n  file: a\n  multiplier:\tm\n\tdiscount: d\noutput: {file: b}\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_EQ(message.rfind("job.yaml:", 0), 0u) << message;
  EXPECT_NE(message.find("a tab character"), std::string::npos) << message;
  // A syntax error with no tab keeps yaml-cpp's own words.
  std::tie(code, message) = error_of("input: {file: in.h5\noutput: {file: o.h5}\n");
  EXPECT_NE(message.find("YAML syntax error"), std::string::npos) << message;
  EXPECT_EQ(message.find("tab"), std::string::npos) << message;
}

// A tab that YAML allows stays allowed: inside quotes, in a comment.
TEST(Config, TabsInsideQuotesAndCommentsAreAccepted) {
  Config c = parse("input:\n  file: \"in\tput.h5\"\n  multiplier: 'm\tx'  # a\tcomment\noutput: {file: b}\n");
  EXPECT_EQ(c.input.file, "in\tput.h5");
  EXPECT_EQ(c.input.multiplier, "m\tx");
  // A later, unrelated error is not blamed on the quoted tab.
  auto [code, message] = error_of("input:\n  file: \"a\tb\"\n  discount: it's\noutput: {file: b\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_EQ(message.find("tab"), std::string::npos) << message;
  EXPECT_NE(message.find("YAML syntax error"), std::string::npos) << message;
}

TEST(Config, LimitsDefaultToUnknownDisksAndMeasuredLinks) {
  Config c = parse(kMinimal);
  EXPECT_FALSE(c.limits.read.has_value());
  EXPECT_FALSE(c.limits.write.has_value());
  EXPECT_FALSE(c.limits.h2d.has_value());
  EXPECT_FALSE(c.limits.d2h.has_value());
  EXPECT_FALSE(c.limits.kernel.has_value());
  EXPECT_TRUE(c.limits.measure);
}

TEST(Config, LimitsAcceptNumbersAndSpeedStrings) {
  Config c = parse(std::string(kMinimal) +
                   "limits:\n  read: 2.5\n  write: \"1.1GB/s\"\n  h2d: 55 GB/s\n  d2h: auto\n  kernel: 3.9TB/s\n"
                   "  measure: false\n");
  ASSERT_TRUE(c.limits.read && c.limits.write && c.limits.h2d && c.limits.kernel);
  EXPECT_DOUBLE_EQ(*c.limits.read, 2.5);
  EXPECT_DOUBLE_EQ(*c.limits.write, 1.1);
  EXPECT_DOUBLE_EQ(*c.limits.h2d, 55.0);
  EXPECT_FALSE(c.limits.d2h.has_value());
  EXPECT_DOUBLE_EQ(*c.limits.kernel, 3900.0);
  EXPECT_FALSE(c.limits.measure);
  // The effective config prints them and reads back the same.
  Config again = parse_config(c.to_yaml(), "again.yaml");
  EXPECT_EQ(again.to_yaml(), c.to_yaml());
  EXPECT_DOUBLE_EQ(*again.limits.read, 2.5);
  EXPECT_DOUBLE_EQ(*again.limits.kernel, 3900.0);
  EXPECT_FALSE(again.limits.d2h.has_value());
  EXPECT_FALSE(again.limits.measure);
  EXPECT_NE(c.to_yaml().find("d2h: auto"), std::string::npos) << c.to_yaml();
  // Defaults print too, and unknown disks stay unknown.
  Config plain = parse_config(parse(kMinimal).to_yaml(), "plain.yaml");
  EXPECT_FALSE(plain.limits.read.has_value());
  EXPECT_FALSE(plain.limits.kernel.has_value());
  EXPECT_TRUE(plain.limits.measure);
}

TEST(Config, SpeedForms) {
  EXPECT_DOUBLE_EQ(parse_gb_per_s("2.5"), 2.5);
  EXPECT_DOUBLE_EQ(parse_gb_per_s("2.5GB/s"), 2.5);
  EXPECT_DOUBLE_EQ(parse_gb_per_s("2.5 gb/s"), 2.5);
  EXPECT_DOUBLE_EQ(parse_gb_per_s("800MB/s"), 0.8);
  EXPECT_DOUBLE_EQ(parse_gb_per_s("1.2TB/s"), 1200.0);
  EXPECT_DOUBLE_EQ(parse_gb_per_s("1GiB/s"), 1.073741824);
  EXPECT_DOUBLE_EQ(parse_gb_per_s("1e3MB/s"), 1.0);
  EXPECT_THROW(parse_gb_per_s(""), std::invalid_argument);
  EXPECT_THROW(parse_gb_per_s("-1"), std::invalid_argument);
  EXPECT_THROW(parse_gb_per_s("0GB/s"), std::invalid_argument);
  EXPECT_THROW(parse_gb_per_s("GB/s"), std::invalid_argument);
  EXPECT_THROW(parse_gb_per_s("2.5GB"), std::invalid_argument);
  EXPECT_THROW(parse_gb_per_s("1.2.3"), std::invalid_argument);
  EXPECT_THROW(parse_gb_per_s("1e9TB/s"), std::invalid_argument);
}

TEST(Config, DuplicateKeysAreRefusedWithBothPlaces) {
  // Top level: a second memory section appended as an override.
  auto [code, message] = error_of(std::string(kMinimal) + "memory: {host_budget: 1GiB}\nmemory: {host_budget: 2GiB}\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_NE(message.find("job.yaml:4:1: duplicate key 'memory' (first given at job.yaml:3:1)"), std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  // Nested, block style.
  std::tie(code, message) = error_of("input:\n  file: a.h5\n  multiplier: m\n  file: b.h5\noutput: {file: o.h5}\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_NE(message.find("job.yaml:4:3: duplicate key 'input.file' (first given at job.yaml:2:3)"), std::string::npos)
      << message;
  // Deeper, in flow style, and inside a sequence item.
  std::tie(code, message) = error_of(std::string(kMinimal) + "limits: {disk_read: {a: 1, a: 2}}\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_NE(message.find("duplicate key 'limits.disk_read.a'"), std::string::npos) << message;
  std::tie(code, message) = error_of(std::string(kMinimal) + "compute: {parallel_dims: [{x: 1, x: 2}]}\n");
  EXPECT_NE(message.find("duplicate key 'compute.parallel_dims[0].x'"), std::string::npos) << message;
  // The same key in two different mappings is not a duplicate.
  EXPECT_NO_THROW(parse("input: {file: a.h5}\noutput: {file: o.h5, dataset: cv}\nreport: r.json\n"));
}

TEST(Config, EmptyFileIsAnError) {
  auto [code, message] = error_of("");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_NE(message.find("empty"), std::string::npos);
}

TEST(Config, MissingFileIsInputMissing) {
  try {
    load_config("/nonexistent/dir/job.yaml");
    FAIL() << "no error";
  } catch (const Error& e) { EXPECT_EQ(e.code(), ExitCode::input_missing); }
}

// docs/config.md is the reference users read: every key it documents must be
// one the parser accepts, and every accepted key must be documented.
TEST(ConfigReference, DocsAndParserAgreeOnEveryKey) {
  std::ifstream doc(DISCOUNT_SOURCE_DIR "/docs/config.md");
  ASSERT_TRUE(doc) << "docs/config.md not found";
  std::map<std::string, std::set<std::string>> documented;
  const std::regex heading("^## (.+)$"), row("^\\| `([a-z0-9_]+)` \\|");
  std::string section, line;
  while (std::getline(doc, line)) {
    std::smatch m;
    if (std::regex_search(line, m, heading))
      section = m[1] == "top level" ? "" : std::string(m[1]);
    else if (std::regex_search(line, m, row))
      documented[section].insert(m[1]);
    if (line.find("`synthetic`") != std::string::npos && line.find("`{dates, ids, nums, seed}`") != std::string::npos)
      documented["input.synthetic"] = {"dates", "ids", "nums", "seed"};
    if (line.rfind("| `compression` |", 0) == 0)
      for (const char* key : {"codec", "level", "shuffle", "chunks"})
        if (line.find(std::string("`") + key + "`") != std::string::npos) documented["output.compression"].insert(key);
  }
  // Top-level sections are documented by their own headings.
  for (const char* name : {"input", "output", "compute", "memory", "limits", "ranks"}) documented[""].insert(name);
  std::map<std::string, std::set<std::string>> accepted;
  for (const auto& [name, keys] : config_schema()) accepted[name] = {keys.begin(), keys.end()};
  EXPECT_EQ(documented, accepted);
}

TEST(Config, RanksTimeout) {
  const Config defaults = parse("input: {file: a.h5}\noutput: {file: /o.h5}\n");
  EXPECT_EQ(defaults.ranks.timeout_seconds, 300.0);
  EXPECT_NE(defaults.to_yaml().find("ranks:\n  timeout: 300"), std::string::npos) << defaults.to_yaml();
  const Config c = parse("input: {file: a.h5}\noutput: {file: /o.h5}\nranks: {timeout: 7.5}\n");
  EXPECT_EQ(c.ranks.timeout_seconds, 7.5);
  EXPECT_NE(c.to_yaml().find("timeout: 7.5"), std::string::npos) << c.to_yaml();
  EXPECT_EQ(parse("input: {file: a.h5}\noutput: {file: /o.h5}\nranks: {timeout: 0}\n").ranks.timeout_seconds, 0.0);
}

TEST(Config, InputFileListMultiplierAxesAndGlobs) {
  Config c = parse("input: {file: [a.h5, /b/c.h5, d.h5], multiplier_axes: [num, id]}\noutput: {file: /o.h5}\n");
  EXPECT_EQ(c.input.files, (std::vector<std::string>{"a.h5", "/b/c.h5", "d.h5"}));
  EXPECT_EQ(c.input.file, "a.h5");
  ASSERT_TRUE(c.input.multiplier_axes);
  EXPECT_EQ((*c.input.multiplier_axes)[0], Axis::num);
  EXPECT_FALSE(c.input.axes_given);
  EXPECT_NE(c.to_yaml().find("multiplier_axes: [num, id]"), std::string::npos) << c.to_yaml();
  // One file in a list is one file.
  Config one = parse("input: {file: [a.h5], axes: [id, date, num]}\noutput: {file: /o.h5}\n");
  EXPECT_TRUE(one.input.files.empty());
  EXPECT_EQ(one.input.file, "a.h5");
  EXPECT_TRUE(one.input.axes_given);
  const auto glob = error_of("input: {file: /no/such/part*.h5}\noutput: {file: /o.h5}\n");
  EXPECT_EQ(glob.first, ExitCode::config);
  EXPECT_NE(glob.second.find("input.file: [part1.h5, part2.h5"), std::string::npos) << glob.second;
  EXPECT_EQ(error_of("input: {file: a.h5, multiplier_axes: [date, id]}\noutput: {file: /o.h5}\n").first,
            ExitCode::config);
  EXPECT_EQ(error_of("input: {file: [], multiplier: m}\noutput: {file: /o.h5}\n").first, ExitCode::config);
}
