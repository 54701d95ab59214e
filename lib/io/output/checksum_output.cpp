#include "io/output/checksum_output.hpp"

#include <algorithm>
#include <cstring>

#include "common/host_parallel.hpp"
#include "io/input/input.hpp"
#include "io/posix/box.hpp"

namespace discount {

ChecksumOutput::ChecksumOutput(std::array<Axis, 3> axes, std::int64_t dates, std::int64_t ids, std::int64_t nums)
    : axes_(axes), dates_(dates), ids_(ids), nums_(nums), sums_(dates, 0.0), bits_(dates, 0) {}

namespace {

// Float sum (four accumulators, so the loop vectorises) and wrapping uint64
// sum of the bit patterns of v[0..n).
void sum_block(const double* v, std::int64_t n, double& sum, std::uint64_t& bits) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::uint64_t b[4] = {0, 0, 0, 0};
  std::int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    for (int u = 0; u < 4; ++u) {
      std::uint64_t x;
      std::memcpy(&x, v + j + u, sizeof x);
      s[u] += v[j + u];
      b[u] += x;
    }
  for (; j < n; ++j) {
    std::uint64_t x;
    std::memcpy(&x, v + j, sizeof x);
    s[0] += v[j];
    b[0] += x;
  }
  sum += (s[0] + s[1]) + (s[2] + s[3]);
  bits += (b[0] + b[1]) + (b[2] + b[3]);
}

}  // namespace

void ChecksumOutput::write_slab(const Slab& slab, const double* buffer, const InputSums&) {
  const auto count = discount_box({dates_, ids_, nums_}, axes_, slab.dates, slab.ids).count;
  const int date_pos = static_cast<int>(std::find(axes_.begin(), axes_.end(), Axis::date) - axes_.begin());
  // Pieces split over threads, each with its own per-date partials, merged
  // in thread order: the same slab gives the same float sums.
  const unsigned parts = io_threads();
  std::vector<std::vector<double>> part_sums(parts, std::vector<double>(sums_.size(), 0.0));
  std::vector<std::vector<std::uint64_t>> part_bits(parts, std::vector<std::uint64_t>(bits_.size(), 0));
  if (date_pos == 0) {
    // Date outermost: each date of the slab is one contiguous block.
    const std::int64_t block = count[1] * count[2];
    host_parallel(count[0] * block, parts, [&](std::int64_t begin, std::int64_t end, unsigned part) {
      while (begin < end) {
        const std::int64_t date = begin / block;
        const std::int64_t stop = std::min(end, (date + 1) * block);
        const auto d = static_cast<std::size_t>(slab.dates.begin + date);
        sum_block(buffer + begin, stop - begin, part_sums[part][d], part_bits[part][d]);
        begin = stop;
      }
    });
  } else {
    const std::int64_t rows = count[0] * count[1];
    host_parallel(rows, parts, [&](std::int64_t begin, std::int64_t end, unsigned part) {
      auto& sums = part_sums[part];
      auto& bits = part_bits[part];
      for (std::int64_t row = begin; row < end; ++row) {
        const double* values = buffer + row * count[2];
        if (date_pos == 2) {
          for (std::int64_t c = 0; c < count[2]; ++c) {
            std::uint64_t b;
            std::memcpy(&b, values + c, sizeof b);
            sums[static_cast<std::size_t>(slab.dates.begin + c)] += values[c];
            bits[static_cast<std::size_t>(slab.dates.begin + c)] += b;
          }
        } else {
          const auto d = static_cast<std::size_t>(slab.dates.begin + row % count[1]);
          sum_block(values, count[2], sums[d], bits[d]);
        }
      }
    });
  }
  for (unsigned p = 0; p < parts; ++p)
    for (std::size_t d = 0; d < sums_.size(); ++d) {
      sums_[d] += part_sums[p][d];
      bits_[d] += part_bits[p][d];
    }
}

std::optional<OutputChecksums> ChecksumOutput::combined_checksums(const RankSums& sum) {
  sum.floats(sums_);
  sum.bits(bits_);
  return OutputChecksums{sums_, bits_, global_bits()};
}

std::uint64_t ChecksumOutput::global_bits() const {
  std::uint64_t total = 0;
  for (auto b : bits_) total += b;
  return total;
}

}  // namespace discount
