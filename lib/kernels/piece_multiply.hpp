// compute.kernel: fused. In host space the reader's threads multiply each
// piece of a slab buffer right after it lands (InputSource's PieceVisitor),
// while the piece is still in cache: the slab is not read again by a kernel
// pass of its own. Plain C++ on the calling thread, no Kokkos: the I/O
// threads run it, each on its own pieces.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace discount {

// The shape of a packed slab buffer for the multiply: extents in memory order
// and, per dimension, the step through the multBy rows (0 along dates).
struct PieceShape {
  std::array<std::int64_t, 3> extent{1, 1, 1};
  std::array<std::int64_t, 3> mult_stride{0, 0, 0};
};

// Adjacent dimensions whose multBy steps continue each other (a stride that is
// the next dimension's extent times its stride, dates with dates) merge, so
// the inner loop runs as long as it can: [date][id][num] becomes
// [date][id*num] with multBy contiguous over the whole row.
inline PieceShape merged_piece_shape(const PieceShape& s) {
  std::array<std::int64_t, 3> extent{1, 1, 1}, stride{0, 0, 0};  // innermost first
  int n = 0;
  std::int64_t cur_extent = s.extent[2], cur_stride = s.mult_stride[2];
  for (int j = 1; j >= 0; --j) {
    if (s.extent[j] == 1) continue;
    if (cur_extent == 1) {
      cur_extent = s.extent[j];
      cur_stride = s.mult_stride[j];
    } else if (s.mult_stride[j] == cur_extent * cur_stride) {
      cur_extent *= s.extent[j];
    } else {
      extent[n] = cur_extent;
      stride[n++] = cur_stride;
      cur_extent = s.extent[j];
      cur_stride = s.mult_stride[j];
    }
  }
  extent[n] = cur_extent;
  stride[n] = cur_stride;
  return {{extent[2], extent[1], extent[0]}, {stride[2], stride[1], stride[0]}};
}

// e = e * mult[m(e)] for the elements [first, first + count) of a packed
// buffer of `shape` (merged or not), where m(e) is the multBy element of e's
// (id, num); `piece` holds those elements (piece[0] is element `first`), in
// the slab buffer or in a small buffer of their own. One IEEE multiply per
// element, as the Kokkos kernels do: the results are the same bit for bit.
inline void multiply_piece(double* piece, const double* mult, const PieceShape& shape, std::int64_t first,
                           std::int64_t count) {
  const auto& e = shape.extent;
  const auto& s = shape.mult_stride;
  std::int64_t c2 = first % e[2], c1 = first / e[2] % e[1], c0 = first / (e[1] * e[2]);
  std::int64_t at = first;
  while (count > 0) {
    const std::int64_t run = std::min(count, e[2] - c2);
    const double* m = mult + c0 * s[0] + c1 * s[1] + c2 * s[2];
    double* d = piece + (at - first);
    if (s[2] == 1) {
      for (std::int64_t j = 0; j < run; ++j) d[j] *= m[j];
    } else if (s[2] == 0) {
      const double factor = *m;
      for (std::int64_t j = 0; j < run; ++j) d[j] *= factor;
    } else {
      for (std::int64_t j = 0; j < run; ++j) d[j] *= m[j * s[2]];
    }
    at += run;
    count -= run;
    c2 = 0;
    if (++c1 == e[1]) {
      c1 = 0;
      ++c0;
    }
  }
}

}  // namespace discount
