#include "io/checksum.hpp"

#include <algorithm>
#include <vector>

#include "common/host_parallel.hpp"

namespace discount {

namespace {

// Elements [begin, end) of the packed buffer, row piece by row piece.
template <class T>
std::uint64_t range_sum_of(const T* buffer, const std::array<std::int64_t, 3>& dims,
                           const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                           std::int64_t begin, std::int64_t end, SumKey key, bool* nonfinite = nullptr) {
  const std::int64_t row = count[2];
  std::uint64_t sum = 0;
  if (nonfinite) *nonfinite = false;
  while (begin < end) {
    const std::int64_t r = begin / row, column = begin % row;
    const std::int64_t stop = std::min(end, (r + 1) * row);
    const std::int64_t a = r / count[1], b = r % count[1];
    const std::int64_t first = ((start[0] + a) * dims[1] + start[1] + b) * dims[2] + start[2] + column;
    bool row_nonfinite = false;
    sum += run_sum(buffer + begin, stop - begin, first, key, nonfinite ? &row_nonfinite : nullptr);
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
    part_sums[part] += range_sum_of(buffer, dims, start, count, begin, end, key);
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

std::uint64_t box_range_sum(const double* buffer, const std::array<std::int64_t, 3>& dims,
                            const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                            std::int64_t begin, std::int64_t end, SumKey key, bool* nonfinite) {
  return range_sum_of(buffer, dims, start, count, begin, end, key, nonfinite);
}

std::uint64_t box_range_sum(const float* buffer, const std::array<std::int64_t, 3>& dims,
                            const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                            std::int64_t begin, std::int64_t end, SumKey key) {
  return range_sum_of(buffer, dims, start, count, begin, end, key);
}

std::uint64_t box_sum(const float* buffer, const std::array<std::int64_t, 3>& dims,
                      const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, SumKey key) {
  return box_sum_of(buffer, dims, start, count, key);
}

}  // namespace discount
