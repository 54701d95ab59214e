// Hostile YAML (config/yaml_guard.hpp) refused from the text alone.
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

// ---------------------------------------------------------------------------
// Hostile configs: each is refused from the text alone, before yaml-cpp
// builds (or expands) a tree, with file:line:col and one bounded line.

namespace {

// One line, exit 78, starting with the place given.
void expect_refused(const std::string& text, const std::string& where, const std::string& what) {
  auto [code, message] = error_of(text);
  EXPECT_EQ(code, ExitCode::config) << message;
  EXPECT_EQ(message.rfind(where, 0), 0u) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_LT(message.size(), 600u) << message.substr(0, 600);
}

}  // namespace

TEST(ConfigGuard, BillionLaughsIsRefusedAtItsFirstAnchor) {
  std::string text = std::string(kMinimal) + "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) text += std::string(i ? ", " : "") + "*" + static_cast<char>(c - 1);
    text += "]\n";
  }
  expect_refused(text, "job.yaml:3:4: ", "anchors and aliases are not supported in this config");
}

TEST(ConfigGuard, AliasesAreRefusedEvenWithoutAnAnchor) {
  expect_refused(std::string(kMinimal) + "verify: *nowhere\n",
                 "job.yaml:3:9: ", "anchors and aliases are not supported");
  expect_refused("input: {file: a}\noutput: &o {file: b}\ncompute: *o\n",
                 "job.yaml:2:9: ", "anchors and aliases are not supported");
}

TEST(ConfigGuard, ComplexAndNullKeysAreConfigErrors) {
  expect_refused(std::string(kMinimal) + "? [a, b]\n: 1\n", "job.yaml:3:3: ", "a complex key (a list");
  expect_refused(std::string(kMinimal) + "? {a: 1}\n: 1\n", "job.yaml:3:3: ", "a complex key (a mapping");
  expect_refused(std::string(kMinimal) + "~: 1\n", "job.yaml:3:1: ", "an empty or null key");
  expect_refused("input: {file: a, ? [x]: 1}\noutput: {file: b}\n", "job.yaml:1:", "a complex key");
}

TEST(ConfigGuard, ASecondDocumentIsRefused) {
  expect_refused(std::string(kMinimal) + "---\n" + kMinimal, "job.yaml:3:1: ", "a second YAML document");
  expect_refused(std::string("---\n") + kMinimal + "...\n---\n", "job.yaml:5:1: ", "a second YAML document");
  // One document with its markers is fine.
  EXPECT_NO_THROW(parse(std::string("---\n") + kMinimal + "...\n"));
}

TEST(ConfigGuard, NodeCountAndFlowNestingAreBounded) {
  std::string many = std::string(kMinimal) + "x: [";
  for (int i = 0; i < 20000; ++i) many += "1,";
  expect_refused(many + "]\n", "job.yaml:3:", "YAML nodes");
  // The 1001st opening: kMinimal holds two ('{'), then 999 '[' from column 4.
  expect_refused(std::string(kMinimal) + "x: " + std::string(200000, '[') + "\n",
                 "job.yaml:3:1002: ", "more than 1000 '[' or '{'");
  // Brackets in comments do not count.
  std::string comments = kMinimal;
  for (int i = 0; i < 300; ++i) comments += "# [[[[ {{{{\n";
  EXPECT_NO_THROW(parse(comments));
}

TEST(ConfigGuard, DuplicateKeysInALargeMappingAreFoundInLinearTime) {
  // 4000 distinct keys, then the first again: the check keeps a hash of the
  // mapping's keys, not a list compared with each new key.
  std::string text = std::string(kMinimal) + "x:\n";
  for (int i = 0; i < 4000; ++i) text += "  k" + std::to_string(i) + ": 1\n";
  text += "  k0: 2\n";
  expect_refused(text, "job.yaml:4004:3: ", "duplicate key 'x.k0' (first given at job.yaml:4:3)");
}

TEST(ConfigGuard, LongAndBinaryValuesAreQuotedBoundedAndPrintable) {
  const std::string huge(300000, 'y');
  auto [code, message] = error_of(std::string(kMinimal) + "verify: '" + huge + "'\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
  EXPECT_NE(message.find("...' (300000 bytes)"), std::string::npos) << message;
  // A huge unknown key, given the explicit way yaml-cpp allows.
  std::tie(code, message) = error_of(std::string(kMinimal) + "? " + std::string(500000, 'k') + "\n: 1\n");
  EXPECT_EQ(code, ExitCode::config);
  EXPECT_NE(message.find("unknown key 'kkk"), std::string::npos) << message.substr(0, 300);
  EXPECT_LT(message.size(), 500u);
  // Control bytes and bytes that are not UTF-8 are escaped.
  std::tie(code, message) = error_of(std::string(kMinimal) + "verify: \"\\e[31mred\\a\"\n");
  EXPECT_NE(message.find("not '\\x1B[31mred\\x07'"), std::string::npos) << message;
  std::tie(code, message) = error_of(std::string(kMinimal) + "verify: \"\xff\xfe ok\"\n");
  EXPECT_NE(message.find("not '\\xFF\\xFE ok'"), std::string::npos) << message;
  // The file name is shown the same way.
  try {
    parse_config(std::string(kMinimal) + "verify: x\n", "odd\nname\x1b.yaml");
    FAIL() << "no error";
  } catch (const Error& e) { EXPECT_EQ(std::string(e.what()).rfind("odd\\nname\\x1B.yaml:3:9: ", 0), 0u) << e.what(); }
}

TEST(ConfigGuard, OutputDatasetMustNameADataset) {
  for (const char* bad : {"/", "//", "a/", "results/run1/", "a//b", "./cv", "discount_app/cv", "/discount_app"}) {
    auto [code, message] = error_of("input: {file: a}\noutput: {file: b, dataset: '" + std::string(bad) + "'}\n");
    EXPECT_EQ(code, ExitCode::config) << bad;
    EXPECT_EQ(message.rfind("job.yaml:2:28: 'output.dataset' = '", 0), 0u) << message;
  }
  for (const char* good : {"cv", "/cv", "results/run1/cv", "/results/cv", "discount_apps/cv"})
    EXPECT_EQ(parse("input: {file: a}\noutput: {file: b, dataset: '" + std::string(good) + "'}\n").output.dataset,
              good);
  auto [code, message] = error_of("input: {file: a}\noutput: {file: b, dataset: ''}\n");
  EXPECT_EQ(code, ExitCode::config);
}

TEST(ConfigGuard, YamlValuesThatYamlCppCannotConvertAreConfigErrors) {
  // Each went to "internal error: yaml-cpp ... bad conversion" or similar before.
  for (const std::string extra :
       {"? [a, b]\n: 1\n", "input2: !!binary '%%%'\n", "memory: {pipeline_depth: [1]}\n", "compute: {tile: [{a: 1}]}\n",
        "compute: {parallel_dims: [[date]]}\n", "memory: {host_budget: '%'}\n", "memory: {host_budget: '.GiB'}\n"}) {
    auto [code, message] = error_of(std::string(kMinimal) + extra);
    EXPECT_EQ(code, ExitCode::config) << extra << ": " << message;
    EXPECT_EQ(message.rfind("job.yaml:", 0), 0u) << message;
  }
}
