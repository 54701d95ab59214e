// The DISCOUNT_* environment variables as read_knobs() reads them
// (common/knobs.hpp): defaults when unset, each value's range, and malformed
// values ignored the way the readers before it ignored them.
#include "common/knobs.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace discount {
namespace {

constexpr const char* kNames[] = {"DISCOUNT_IO_THREADS",  "DISCOUNT_MEMORY_THREADS", "DISCOUNT_DEVICE_PIECE_MIB",
                                  "DISCOUNT_STAGING_PIN", "DISCOUNT_WRITEBACK",      "DISCOUNT_CACHE_DIR",
                                  "DISCOUNT_TEST_HOLD"};

// Sets the given variables (and unsets every other knob) for one test, and
// puts the environment back as it was afterwards.
class Environment {
 public:
  explicit Environment(std::initializer_list<std::pair<const char*, const char*>> values) {
    for (const char* name : kNames) {
      const char* was = std::getenv(name);
      saved_.emplace_back(name, was ? std::optional<std::string>(was) : std::nullopt);
      ::unsetenv(name);
    }
    for (const auto& [name, value] : values) ::setenv(name, value, 1);
  }
  ~Environment() {
    for (const auto& [name, value] : saved_)
      if (value)
        ::setenv(name, value->c_str(), 1);
      else
        ::unsetenv(name);
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST(Knobs, DefaultsWhenUnset) {
  const Environment env({});
  const Knobs k = read_knobs();
  EXPECT_EQ(k.io_threads, 0);
  EXPECT_EQ(k.memory_threads, 0);
  EXPECT_EQ(k.device_piece_mib, 0);
  EXPECT_FALSE(k.staging_pin_alloc);
  EXPECT_TRUE(k.writeback);
  EXPECT_EQ(k.cache_dir, "");
  EXPECT_EQ(k.test_hold, "");
}

TEST(Knobs, ReadsEachVariable) {
  const Environment env({{"DISCOUNT_IO_THREADS", "4"},
                         {"DISCOUNT_MEMORY_THREADS", "12"},
                         {"DISCOUNT_DEVICE_PIECE_MIB", "8"},
                         {"DISCOUNT_STAGING_PIN", "alloc"},
                         {"DISCOUNT_WRITEBACK", "off"},
                         {"DISCOUNT_CACHE_DIR", "/tmp/cache here"},
                         {"DISCOUNT_TEST_HOLD", "/tmp/hold"}});
  const Knobs k = read_knobs();
  EXPECT_EQ(k.io_threads, 4);
  EXPECT_EQ(k.memory_threads, 12);
  EXPECT_EQ(k.device_piece_mib, 8);
  EXPECT_TRUE(k.staging_pin_alloc);
  EXPECT_FALSE(k.writeback);
  EXPECT_EQ(k.cache_dir, "/tmp/cache here");
  EXPECT_EQ(k.test_hold, "/tmp/hold");
}

TEST(Knobs, CountsAreHeldTo64) {
  const Environment env({{"DISCOUNT_IO_THREADS", "65"},
                         {"DISCOUNT_MEMORY_THREADS", "99999999999999999999"},
                         {"DISCOUNT_DEVICE_PIECE_MIB", "1000"}});
  const Knobs k = read_knobs();
  EXPECT_EQ(k.io_threads, 64);
  EXPECT_EQ(k.memory_threads, 64);
  EXPECT_EQ(k.device_piece_mib, 64);
}

// A count that is not a positive number is ignored (the default stays); one
// with trailing text reads its leading digits, as std::atoi did.
TEST(Knobs, MalformedCountsAreIgnored) {
  for (const char* bad : {"", "0", "-3", "abc", " ", "-99999999999999999999"}) {
    const Environment env({{"DISCOUNT_IO_THREADS", bad}, {"DISCOUNT_MEMORY_THREADS", bad}});
    const Knobs k = read_knobs();
    EXPECT_EQ(k.io_threads, 0) << "'" << bad << "'";
    EXPECT_EQ(k.memory_threads, 0) << "'" << bad << "'";
  }
  const Environment env({{"DISCOUNT_IO_THREADS", "8x"}, {"DISCOUNT_MEMORY_THREADS", " 3"}});
  EXPECT_EQ(read_knobs().io_threads, 8);
  EXPECT_EQ(read_knobs().memory_threads, 3);
}

// DISCOUNT_DEVICE_PIECE_MIB set to anything but a positive size gives 1 MiB
// pieces everywhere, arrays in place included (their 8 MiB needs it unset).
TEST(Knobs, DevicePieceSetButMalformedIsOneMib) {
  for (const char* bad : {"", "0", "-1", "big"}) {
    const Environment env({{"DISCOUNT_DEVICE_PIECE_MIB", bad}});
    EXPECT_EQ(read_knobs().device_piece_mib, 1) << "'" << bad << "'";
  }
}

// The switches take one exact word; anything else leaves the default.
TEST(Knobs, SwitchesTakeOnlyTheirWord) {
  for (const char* other : {"", "ALLOC", "alloc ", "register", "1"}) {
    const Environment env({{"DISCOUNT_STAGING_PIN", other}, {"DISCOUNT_WRITEBACK", other}});
    const Knobs k = read_knobs();
    EXPECT_FALSE(k.staging_pin_alloc) << "'" << other << "'";
    EXPECT_TRUE(k.writeback) << "'" << other << "'";
  }
  const Environment env({{"DISCOUNT_WRITEBACK", "OFF"}});
  EXPECT_TRUE(read_knobs().writeback);
}

// The process's reading is taken once: later changes to the environment
// leave it as it was (a job reads its own with read_knobs()).
TEST(Knobs, ProcessReadingIsKept) {
  const Environment env({{"DISCOUNT_IO_THREADS", "5"}});
  const Knobs& first = knobs();
  const int io = first.io_threads;
  ::setenv("DISCOUNT_IO_THREADS", "7", 1);
  EXPECT_EQ(&knobs(), &first);
  EXPECT_EQ(knobs().io_threads, io);
  EXPECT_EQ(read_knobs().io_threads, 7);
}

}  // namespace
}  // namespace discount
