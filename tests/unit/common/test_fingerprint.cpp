// The resume fingerprint and the limits cache's names (common/fingerprint.hpp).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/fingerprint.hpp"

using namespace discount;

// 64-bit FNV-1a, its published start value and test vector.
TEST(Fingerprint, Fnv1a64InSixteenHexDigits) {
  EXPECT_EQ(fingerprint_of(""), "cbf29ce484222325");
  EXPECT_EQ(fingerprint_of("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(fingerprint_of("job-a"), "f2c3188020094686");
  EXPECT_EQ(fingerprint_of(std::string("a\0b", 3)).size(), 16u);  // every byte counts, NUL too
  EXPECT_NE(fingerprint_of(std::string("a\0b", 3)), fingerprint_of("a"));
}

TEST(Fingerprint, NearbyTextsDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(fingerprint_of("input: in.h5\nslab " + std::to_string(i)));
  EXPECT_EQ(seen.size(), 1000u);
}
