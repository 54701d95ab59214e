// Positional checksums of float64 data: the wrapping sum, over the elements,
// of a 64-bit mix of each element's bits and its index in its dataset. A sum
// does not depend on how the elements are split into pieces or in which order
// they are added, so the writer can checksum a slab as it is packed, a resume
// can re-read the same elements in other pieces (another slab partition, a
// smaller buffer), and the checksums of adjacent ranges add up to the
// checksum of their union. Changing one element always changes the sum (the
// mix is a bijection of the bits for a given index); other damage is missed
// with a probability of about 2^-64. Pure, apart from spreading large boxes
// over the I/O threads.
#pragma once

#include <array>
#include <cstdint>

namespace discount {

// Which dataset a sum is over: the same bytes at the same index give
// unrelated terms in different datasets.
enum class SumKey : std::uint64_t {
  output = 0x6f75747075742d63ull,      // cv
  discount = 0x646973636f756e74ull,    // the discount input
  multiplier = 0x6d756c7442792d6dull,  // the multBy input
};

// The term of one element: a bijection of its bits for a given index (xor
// with the index's key, an odd multiply, an xor-shift), so a change to one
// element always changes the sum, and changes to several cancel only by
// chance. One multiply per element.
constexpr std::uint64_t kIndexStep = 0x9e3779b97f4a7c15ull, kMultiplier = 0xbf58476d1ce4e5b9ull;
inline std::uint64_t element_term(std::uint64_t bits, std::uint64_t index_key) {
  std::uint64_t t = (bits ^ index_key) * kMultiplier;
  return t ^ (t >> 29);
}

// The sum of the terms of v[0..n), the elements at indices first .. first+n-1.
// float32 values (output.dtype: float32) are summed as the float64 they
// widen to exactly, so a value's term does not depend on how it is stored.
// With `nonfinite`, the same pass also sets *nonfinite when some element is
// NaN or Inf (its magnitude's bits at or above the all-ones exponent): the
// reader's non-finite scan rides on the input checksum's pass.
// Defined in checksum.cpp, where GCC builds an AVX-512 version beside the
// baseline one and the loader picks one for the CPU it runs on: the 64-bit
// multiplies then go eight at a time (20 against 6 GB/s per core on the
// development VM). Both give the same sums.
std::uint64_t run_sum(const double* v, std::int64_t n, std::int64_t first, SumKey key, bool* nonfinite = nullptr);
std::uint64_t run_sum(const float* v, std::int64_t n, std::int64_t first, SumKey key, bool* nonfinite = nullptr);

// The sum over a packed buffer holding the box [start, start+count) of a
// row-major array of extents `dims` (indices in that array), split over the
// I/O threads when large.
std::uint64_t box_sum(const double* buffer, const std::array<std::int64_t, 3>& dims,
                      const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, SumKey key);
std::uint64_t box_sum(const float* buffer, const std::array<std::int64_t, 3>& dims,
                      const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, SumKey key);

// The part of box_sum from elements [begin, end) of that packed buffer, on
// the calling thread: the sums of pieces that tile the buffer add up to box_sum.
// `piece` holds just those elements (piece[0] is element `begin`): a slab
// buffer's piece (buffer + begin) or a small buffer of its own
// (memory.staging: none). `nonfinite` as for run_sum.
std::uint64_t box_piece_sum(const double* piece, const std::array<std::int64_t, 3>& dims,
                            const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                            std::int64_t begin, std::int64_t end, SumKey key, bool* nonfinite = nullptr);
std::uint64_t box_piece_sum(const float* piece, const std::array<std::int64_t, 3>& dims,
                            const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                            std::int64_t begin, std::int64_t end, SumKey key);

}  // namespace discount
