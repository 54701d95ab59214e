#include "common/knobs.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace discount {

namespace {

constexpr int kMostThreads = 64;
constexpr int kMostPieceMib = 64;

// Leading whole number of `text` as std::atoi reads it (spaces, sign,
// digits, then anything), held within int; 0 when there is none.
int leading_int(const char* text) {
  const long value = std::strtol(text, nullptr, 10);
  return static_cast<int>(std::clamp<long>(value, INT_MIN, INT_MAX));
}

// A positive count held to `most`; 0 (unset) when absent or not positive.
int positive_count(const char* text, int most) {
  if (!text) return 0;
  const int value = leading_int(text);
  return value > 0 ? std::min(value, most) : 0;
}

std::string non_empty(const char* text) { return text && *text ? text : ""; }

}  // namespace

Knobs read_knobs() {
  Knobs k;
  k.io_threads = positive_count(std::getenv("DISCOUNT_IO_THREADS"), kMostThreads);
  k.memory_threads = positive_count(std::getenv("DISCOUNT_MEMORY_THREADS"), kMostThreads);
  if (const char* mib = std::getenv("DISCOUNT_DEVICE_PIECE_MIB"))
    k.device_piece_mib = std::max(1, positive_count(mib, kMostPieceMib));  // set but not a size: 1 MiB
  if (const char* pin = std::getenv("DISCOUNT_STAGING_PIN")) k.staging_pin_alloc = std::strcmp(pin, "alloc") == 0;
  if (const char* writeback = std::getenv("DISCOUNT_WRITEBACK")) k.writeback = std::strcmp(writeback, "off") != 0;
  k.cache_dir = non_empty(std::getenv("DISCOUNT_CACHE_DIR"));
  k.test_hold = non_empty(std::getenv("DISCOUNT_TEST_HOLD"));
  return k;
}

const char* environment_value(const char* name) { return std::getenv(name); }

const Knobs& knobs() {
  static const Knobs read = read_knobs();
  return read;
}

}  // namespace discount
