// The documented value formula shared by `discount_app generate` and
// `input.synthetic`, so a synthetic run and a generated file hold the same
// numbers and any reader (NumPy included) can recompute them:
//
//   mix(x)    = splitmix64 finaliser of x (wrapping uint64 arithmetic)
//   key(s, t) = mix(seed XOR (t << 56))          t = 1 for multBy, 2 for discount
//   value(n)  = 0.5 + (mix(key + n) >> 11) * 2^-53      in [0.5, 1.5), never 0
//
// n is the logical row-major index: multBy n = i*nums + k, discount
// n = (d*ids + i)*nums + k, over the file's full extents, whatever the axes order.
//
// `generate --values realistic` writes numbers shaped like real portfolios
// instead (keys of streams 3 and 4), each element from its indices and the
// seed alone, so no thread count or block size changes them:
//
//   h(t, n)         = mix(key(seed, t) + n)
//   rate(i, k)      = (50 + ((h(3, i*nums + k) >> 11) * 751 >> 53)) / 10000
//                     0.0050 .. 0.0800, 4 decimals: 751 rates, shared by many ids
//   t(d)            = (d + 1) / 12                      monthly dates, in years
//   discount(d,i,k) = max(round(exp(-rate(i, k) * t(d)) * 1e8), 1) / 1e8
//                     8 decimals, in [1e-8, 1), never rising along dates
//   multBy(i, k)    = round(10^(3 + 1.5*s) * 100) / 100   cents, 1.00 .. 1,000,000.00
//                     s = sum over j < 4 of (((h(4, i*nums + k) >> 16j) & 0xFFFF) + 0.5) / 65536, minus 2
//
// round() is half away from zero (std::round); the divisions are the last
// step, so each value is the double nearest its decimal.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace discount::synthetic {

constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

enum Stream : std::uint64_t { multiplier = 1, discount = 2, rate = 3, amount = 4 };

constexpr std::uint64_t key(std::uint64_t seed, Stream stream) { return mix(seed ^ (std::uint64_t(stream) << 56)); }

constexpr double value(std::uint64_t key, std::uint64_t n) {
  return 0.5 + static_cast<double>(mix(key + n) >> 11) * 0x1.0p-53;
}

// --values realistic, n = i*nums + k: the rate of (id, num) from rate_key =
// key(seed, rate), its discount factor on date d, and its multBy from
// amount_key = key(seed, amount).
constexpr double curve_rate(std::uint64_t rate_key, std::uint64_t n) {
  return static_cast<double>(50 + (((mix(rate_key + n) >> 11) * 751) >> 53)) / 10000;
}

inline double years(std::int64_t d) { return static_cast<double>(d + 1) / 12; }

inline double discount_factor(double rate, std::int64_t d) {
  return std::max(std::round(std::exp(-rate * years(d)) * 1e8), 1.0) / 1e8;
}

inline double cents_amount(std::uint64_t amount_key, std::uint64_t n) {
  const std::uint64_t h = mix(amount_key + n);
  double s = -2;
  for (int j = 0; j < 4; ++j) s += (static_cast<double>((h >> (16 * j)) & 0xFFFF) + 0.5) / 65536;
  return std::round(std::pow(10.0, 3 + 1.5 * s) * 100) / 100;
}

}  // namespace discount::synthetic
