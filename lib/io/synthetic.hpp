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
#pragma once

#include <cstdint>

namespace discount::synthetic {

constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

enum Stream : std::uint64_t { multiplier = 1, discount = 2 };

constexpr std::uint64_t key(std::uint64_t seed, Stream stream) { return mix(seed ^ (std::uint64_t(stream) << 56)); }

constexpr double value(std::uint64_t key, std::uint64_t n) {
  return 0.5 + static_cast<double>(mix(key + n) >> 11) * 0x1.0p-53;
}

}  // namespace discount::synthetic
