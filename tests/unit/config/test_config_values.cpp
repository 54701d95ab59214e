// Memory sizes as the config writes and reads them (config/config_values.cpp).
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

TEST(MemorySize, Forms) {
  EXPECT_EQ(parse_memory_size("16GiB").bytes, std::uint64_t{16} << 30);
  EXPECT_EQ(parse_memory_size("512MiB").bytes, std::uint64_t{512} << 20);
  EXPECT_EQ(parse_memory_size("1000000").bytes, 1000000u);
  EXPECT_EQ(parse_memory_size("2GB").bytes, 2000000000u);
  EXPECT_EQ(parse_memory_size("1.5KiB").bytes, 1536u);
  auto pct = parse_memory_size("80%");
  EXPECT_TRUE(pct.is_percent);
  EXPECT_EQ(pct.resolve(1000), 800u);
  EXPECT_EQ(parse_memory_size("64MiB").resolve(12345), std::uint64_t{64} << 20);
  EXPECT_THROW(parse_memory_size(""), std::invalid_argument);
  EXPECT_THROW(parse_memory_size("GiB"), std::invalid_argument);
  EXPECT_THROW(parse_memory_size("0"), std::invalid_argument);
  EXPECT_THROW(parse_memory_size("0%"), std::invalid_argument);
}

// The effective config writes sizes as the docs do ("256MiB"), and every
// written size parses back to the same byte count.
TEST(MemorySize, DescribesAsTheDocsWriteAndParsesBack) {
  EXPECT_EQ(parse_memory_size("256MiB").describe(), "256MiB");
  EXPECT_EQ(parse_memory_size("1.5GiB").describe(), "1536MiB");
  EXPECT_EQ(parse_memory_size("2GB").describe(), "2GB");
  EXPECT_EQ(parse_memory_size("1000001").describe(), "1000001");
  EXPECT_EQ(parse_memory_size("80%").describe(), "80%");
  const std::uint64_t sizes[] = {1, 1000, 1024, 268435456, 1000000007, std::uint64_t{3} << 40, 7000000000000};
  for (std::uint64_t bytes : sizes)
    EXPECT_EQ(parse_memory_size(MemorySize{false, 0.0, bytes}.describe()).bytes, bytes) << bytes;
  Config c = parse(std::string(kMinimal) + "memory: {max_slab: 256MiB, device_budget: 16GiB, host_budget: 25%}\n");
  const std::string yaml = c.to_yaml();
  EXPECT_NE(yaml.find("max_slab: 256MiB\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("device_budget: 16GiB\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("host_budget: 25%\n"), std::string::npos) << yaml;
  EXPECT_EQ(parse_config(yaml, "again.yaml").memory.max_slab->bytes, std::uint64_t{256} << 20);
}
