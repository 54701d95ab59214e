// NaN/Inf detection on staging buffers (input.nonfinite: error).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "common/host_parallel.hpp"

namespace discount {

// Index of the first NaN or Inf in data[0, n), or -1, on the calling thread.
// Exponent bits all set means NaN or Inf; the test is branch-free within a
// block so the compiler vectorises it.
inline std::int64_t find_nonfinite_here(const double* data, std::int64_t n) {
  constexpr std::int64_t block = 4096;
  for (std::int64_t s = 0; s < n; s += block) {
    const std::int64_t stop = std::min(n, s + block);
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
      if ((bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull) return i;
    }
  }
  return -1;
}

// Lowers `first` to `index` unless it already holds a smaller one (-1: none yet).
inline void keep_lowest(std::atomic<std::int64_t>& first, std::int64_t index) {
  std::int64_t seen = first.load();
  while ((seen < 0 || index < seen) && !first.compare_exchange_weak(seen, index)) {}
}

// The same over the I/O threads.
inline std::int64_t find_nonfinite(const double* data, std::int64_t n) {
  std::atomic<std::int64_t> first{-1};
  host_parallel(n, io_threads(), [&](std::int64_t b, std::int64_t e, unsigned) {
    const std::int64_t bad = find_nonfinite_here(data + b, e - b);
    if (bad >= 0) keep_lowest(first, b + bad);
  });
  return first.load();
}

}  // namespace discount
