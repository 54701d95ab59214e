// A Config and made-up machine facts for the resolve() tests, and the config
// error resolve() throws for them. Pure: no Kokkos, no HDF5.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "config/config.hpp"
#include "resolve/resolve.hpp"

namespace discount::test_support {

inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

inline Config base_config() {
  Config c;
  c.source_path = "job.yaml";
  c.input.file = "in.h5";
  c.output.file = "out.h5";
  return c;
}

inline SystemFacts facts(std::int64_t dates = 101, std::int64_t ids = 4003, std::int64_t nums = 5) {
  SystemFacts f;
  f.input.dates = dates;
  f.input.ids = ids;
  f.input.nums = nums;
  f.input.identity = "hdf5:in.h5:1:2";
  f.host_bytes = 64 * kGiB;
  f.device_bytes = 16 * kGiB;
  f.writer_threads = 3;
  return f;
}

// The config error resolve() throws, or "" when it throws none.
inline std::string config_error_of(const Config& config, const SystemFacts& f) {
  try {
    resolve(config, f);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace discount::test_support
