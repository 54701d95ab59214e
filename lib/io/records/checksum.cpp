#include "io/records/checksum.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/host_parallel.hpp"

namespace discount {

namespace {

// A float64's bits without its sign, and those of infinity: a magnitude at or
// above kInfinityBits is an Inf or a NaN.
constexpr std::uint64_t kMagnitude = 0x7FFFFFFFFFFFFFFFull, kInfinityBits = 0x7FF0000000000000ull;

// The loop of run_sum, written so that the compiler vectorises it: each
// element's key from its own index (no carried sum of steps), and the
// largest magnitude for the scan.
template <bool Scan, class T>
inline std::uint64_t sum_terms(const T* v, std::int64_t n, std::uint64_t first_key, std::uint64_t& largest) {
  std::uint64_t sum = 0, top = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    std::uint64_t bits;
    const double x = v[j];
    std::memcpy(&bits, &x, sizeof bits);
    sum += element_term(bits, first_key + static_cast<std::uint64_t>(j) * kIndexStep);
    if constexpr (Scan) top = std::max(top, bits & kMagnitude);
  }
  largest = top;
  return sum;
}

// Inlined into each clone of run_sum below, so compiled for its instructions.
template <class T>
inline std::uint64_t run_sum_of(const T* v, std::int64_t n, std::int64_t first, SumKey key, bool* nonfinite) {
  const std::uint64_t first_key = static_cast<std::uint64_t>(first) * kIndexStep + static_cast<std::uint64_t>(key);
  std::uint64_t largest = 0;
  if (!nonfinite) return sum_terms<false>(v, n, first_key, largest);
  const std::uint64_t sum = sum_terms<true>(v, n, first_key, largest);
  *nonfinite = largest >= kInfinityBits;
  return sum;
}

}  // namespace

// GCC on x86-64 Linux: an AVX-512 clone beside the baseline, chosen at load
// time (an ifunc). Elsewhere the baseline alone.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define DISCOUNT_SUM_CLONES __attribute__((target_clones("default", "arch=x86-64-v4")))
#else
#define DISCOUNT_SUM_CLONES
#endif

DISCOUNT_SUM_CLONES
std::uint64_t run_sum(const double* v, std::int64_t n, std::int64_t first, SumKey key, bool* nonfinite) {
  return run_sum_of(v, n, first, key, nonfinite);
}

DISCOUNT_SUM_CLONES
std::uint64_t run_sum(const float* v, std::int64_t n, std::int64_t first, SumKey key, bool* nonfinite) {
  return run_sum_of(v, n, first, key, nonfinite);
}

namespace {

// Elements [begin, end) of the packed buffer, stretch by stretch: a stretch
// is a row of the box, or several rows where the box spans the array's whole
// last extent (then they lie end to end in the array too), so a [date, id,
// num] slab of 5 nums per row is summed in long runs, not 5 at a time.
// `piece` holds those elements: piece[0] is element `begin`.
template <class T>
std::uint64_t range_sum_of(const T* piece, const std::array<std::int64_t, 3>& dims,
                           const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                           std::int64_t begin, std::int64_t end, SumKey key, bool* nonfinite = nullptr) {
  const std::int64_t first_element = begin;
  std::int64_t rows = 1;  // rows per stretch
  if (count[2] == dims[2]) rows = count[1] == dims[1] ? count[0] * count[1] : count[1];
  const std::int64_t stretch = rows * count[2];
  std::uint64_t sum = 0;
  if (nonfinite) *nonfinite = false;
  while (begin < end) {
    const std::int64_t r = begin / stretch, column = begin % stretch;
    const std::int64_t stop = std::min(end, (r + 1) * stretch);
    const std::int64_t row = r * rows, a = row / count[1], b = row % count[1];
    const std::int64_t first = ((start[0] + a) * dims[1] + start[1] + b) * dims[2] + start[2] + column;
    bool row_nonfinite = false;
    sum += run_sum(piece + (begin - first_element), stop - begin, first, key, nonfinite ? &row_nonfinite : nullptr);
    if (row_nonfinite) *nonfinite = true;
    begin = stop;
  }
  return sum;
}

template <class T>
std::uint64_t box_sum_of(const T* buffer, const std::array<std::int64_t, 3>& dims,
                         const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                         SumKey key) {
  const std::int64_t total = count[0] * count[1] * count[2];
  if (total <= 0) return 0;
  const unsigned parts = io_threads();
  std::vector<std::uint64_t> part_sums(parts, 0);
  host_parallel(total, parts, [&](std::int64_t begin, std::int64_t end, unsigned part) {
    part_sums[part] += range_sum_of(buffer + begin, dims, start, count, begin, end, key);
  });
  std::uint64_t sum = 0;
  for (auto s : part_sums) sum += s;
  return sum;
}

}  // namespace

std::uint64_t box_sum(const double* buffer, const std::array<std::int64_t, 3>& dims,
                      const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, SumKey key) {
  return box_sum_of(buffer, dims, start, count, key);
}

std::uint64_t box_piece_sum(const double* piece, const std::array<std::int64_t, 3>& dims,
                            const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                            std::int64_t begin, std::int64_t end, SumKey key, bool* nonfinite) {
  return range_sum_of(piece, dims, start, count, begin, end, key, nonfinite);
}

std::uint64_t box_piece_sum(const float* piece, const std::array<std::int64_t, 3>& dims,
                            const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                            std::int64_t begin, std::int64_t end, SumKey key) {
  return range_sum_of(piece, dims, start, count, begin, end, key);
}

std::uint64_t box_sum(const float* buffer, const std::array<std::int64_t, 3>& dims,
                      const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, SumKey key) {
  return box_sum_of(buffer, dims, start, count, key);
}

}  // namespace discount
