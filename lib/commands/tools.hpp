// The data commands `discount_app verify` and `discount_app generate`
// (commands/verify.cpp, commands/generate.cpp).
// Both use plain HDF5 calls, none of the pipeline's fast paths, so verify is
// an independent check of what the pipeline wrote.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace discount {

struct VerifyOptions {
  bool full = true;  // every element; false: a random sample
  std::uint64_t seed = 12345;
};
// Independent check with plain HDF5 reads and a plain loop: every (or each
// sampled) cv element must equal multBy * discount bit for bit.
int verify_command(const Config& config, const VerifyOptions& options);

// What `generate` fills the datasets with (formulas in io/input/synthetic.hpp):
// random: uniform in [0.5, 1.5), the numbers input.synthetic computes on;
// realistic: discount factors exp(-r t) of monthly dates at a 4-decimal rate
// per (id, num), smooth along dates and repeated across ids as real curves
// are (gzip stores them in about a quarter of their size), and amounts in cents.
enum class GeneratedValues { random, realistic };

struct GenerateOptions {
  std::int64_t dates = 0, ids = 0, nums = 0;
  std::string out;
  std::uint64_t seed = 1;
  std::vector<Axis> axes{Axis::date, Axis::id, Axis::num};
  bool force = false;
  GeneratedValues values = GeneratedValues::random;
};
int generate_command(const GenerateOptions& options);

}  // namespace discount
