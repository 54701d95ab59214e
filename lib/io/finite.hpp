// NaN/Inf detection on staging buffers (input.nonfinite: error).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "common/host_parallel.hpp"

namespace discount {

// Index of the first NaN or Inf in data[0, n), or -1. Exponent bits all set
// means NaN or Inf; the test is branch-free so the compiler vectorises it.
inline std::int64_t find_nonfinite(const double* data, std::int64_t n) {
  std::atomic<std::int64_t> first{-1};
  host_parallel(n, io_threads(), [&](std::int64_t b, std::int64_t e, unsigned) {
    constexpr std::int64_t block = 4096;
    for (std::int64_t s = b; s < e; s += block) {
      const std::int64_t stop = std::min(e, s + block);
      bool bad = false;
      for (std::int64_t i = s; i < stop; ++i) {
        std::uint64_t bits;
        std::memcpy(&bits, data + i, sizeof bits);
        bad |= (bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
      }
      if (!bad) continue;
      for (std::int64_t i = s; i < stop; ++i) {
        std::uint64_t bits;
        std::memcpy(&bits, data + i, sizeof bits);
        if ((bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull) {
          std::int64_t seen = first.load();
          while ((seen < 0 || i < seen) && !first.compare_exchange_weak(seen, i)) {
          }
          return;
        }
      }
    }
  });
  return first.load();
}

}  // namespace discount
