// The generic loop family: a Kokkos RangePolicy (one parallel position) or
// MDRangePolicy (two or three) spans the configured parallel dims, tiled, and
// the other dims are serial loops inside the functor (the seed's
// one-worker-per-date / per-id / per-element choices). Every backend can run
// it; GPUs run it for every slicing but [id, num] (detail/row_pairs.hpp).
// Kernel label: discount::apply.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/detail/tuning.hpp"
#include "kernels/slicing.hpp"

namespace discount {

// GPUs map MDRange dimension 0 to threadIdx.x, so the fastest memory position
// must come first there or loads do not coalesce (docs/performance.md has the
// cost); host backends iterate the last dimension innermost.
template <class ExecSpace>
constexpr bool iterate_reversed() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
}

namespace detail {

constexpr int set_bit(int mask, int n) {  // position of the n-th set bit
  for (int p = 0, seen = 0; p < 3; ++p)
    if (mask & (1 << p)) {
      if (seen == n) return p;
      ++seen;
    }
  return -1;
}

// Index arithmetic runs in `Index` (32-bit when the slab allows: cheaper on
// GPUs). The Views own nothing here; the functor keeps their raw pointers.
template <int Mask, bool Reverse, class Index>
struct ApplyFunctor {
  const double* mult;  // flat [ids * nums] of the slab
  const double* in;    // [e0][e1][e2], row-major
  double* out;         // may alias `in` (in place)
  Index e1, e2;
  Index extent[3];
  Index ms[3];  // multBy stride of each memory position (0 along date)

  static constexpr bool par0 = Mask & 1, par1 = Mask & 2, par2 = Mask & 4;
  static constexpr int rank = int(par0) + int(par1) + int(par2);
  static constexpr int pos0 = set_bit(Mask, 0), pos1 = set_bit(Mask, 1), pos2 = set_bit(Mask, 2);

  // The innermost serial position, if any. Its loop issues kBatch loads before
  // the first store, so each thread keeps several loads in flight although
  // `out` may alias `in`; when multBy does not vary along it (date), multBy is
  // loaded once for the whole line.
  static constexpr int inner_serial = !par2 ? 2 : !par1 ? 1 : !par0 ? 0 : -1;
  static constexpr int kBatch = 4;

  KOKKOS_INLINE_FUNCTION Index offset(Index x, Index y, Index z) const { return (x * e1 + y) * e2 + z; }

  KOKKOS_INLINE_FUNCTION void serial_line(Index x, Index y, Index z) const {
    const Index base = offset(x, y, z);
    const Index mbase = x * ms[0] + y * ms[1] + z * ms[2];
    if constexpr (inner_serial < 0) {
      out[base] = mult[mbase] * in[base];
    } else {
      constexpr int s = inner_serial;
      const Index n = extent[s];
      const Index step = s == 0 ? e1 * e2 : s == 1 ? e2 : Index(1);
      const Index mstep = ms[s];
      const double hoisted = mstep == 0 ? mult[mbase] : 0.0;
      for (Index j = 0; j < n; j += kBatch) {
        double product[kBatch] = {};
        for (int u = 0; u < kBatch; ++u)
          if (j + u < n) {
            const double m = mstep == 0 ? hoisted : mult[mbase + (j + u) * mstep];
            product[u] = m * in[base + (j + u) * step];
          }
        for (int u = 0; u < kBatch; ++u)
          if (j + u < n) out[base + (j + u) * step] = product[u];
      }
    }
  }

  // Parallel positions are fixed by the caller; serial ones are looped here.
  KOKKOS_INLINE_FUNCTION void run(Index a, Index b, Index c) const {
    const Index a_end = (par0 || inner_serial == 0) ? a + 1 : extent[0];
    const Index b_end = (par1 || inner_serial == 1) ? b + 1 : extent[1];
    for (Index x = a; x < a_end; ++x)
      for (Index y = b; y < b_end; ++y) serial_line(x, y, c);
  }

  KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
    Index v[3] = {0, 0, 0};
    v[pos0] = i;
    run(v[0], v[1], v[2]);
  }
  KOKKOS_INLINE_FUNCTION void operator()(Index i, Index j) const {
    Index v[3] = {0, 0, 0};
    v[Reverse ? pos1 : pos0] = i;
    v[Reverse ? pos0 : pos1] = j;
    run(v[0], v[1], v[2]);
  }
  KOKKOS_INLINE_FUNCTION void operator()(Index i, Index j, Index k) const {
    if (Reverse)
      run(k, j, i);
    else
      run(i, j, k);
  }
};

template <class ExecSpace, int Mask, class Index, class MultView, class InView, class OutView>
void launch(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in, const OutView& out,
            const std::array<std::int64_t, 3>& ms) {
  constexpr bool reverse = iterate_reversed<ExecSpace>();
  using Functor = ApplyFunctor<Mask, reverse, Index>;
  const Functor functor{mult.data(),
                        in.data(),
                        out.data(),
                        Index(in.extent(1)),
                        Index(in.extent(2)),
                        {Index(in.extent(0)), Index(in.extent(1)), Index(in.extent(2))},
                        {Index(ms[0]), Index(ms[1]), Index(ms[2])}};
  constexpr int rank = Functor::rank;

  // Parallel memory positions in policy order.
  int order[3] = {Functor::pos0, Functor::pos1, Functor::pos2};
  if (reverse)
    for (int p = 0; p < rank / 2; ++p) std::swap(order[p], order[rank - 1 - p]);
  std::int64_t extent[3] = {1, 1, 1}, tile[3] = {1, 1, 1};
  for (int p = 0; p < rank; ++p) extent[p] = std::int64_t(in.extent(order[p]));

  // Auto tiles: on a GPU, up to 256 threads with the contiguous position on x;
  // on the host, about 2048 iterations per tile along the innermost positions.
  // A GPU block (CUDA's) allows at most kMaxBlockZ threads along z (rank 3's last
  // dimension); resolve() has refused a user tile above it.
  const std::int64_t target = reverse ? 256 : 2048;
  std::int64_t product = 1;
  for (int q = 0; q < rank; ++q) {
    const int p = reverse ? q : rank - 1 - q;  // fastest position first
    const std::int64_t user = slicing.tile[order[p]];
    std::int64_t cap = target / product;
    if (reverse && p == 2) cap = std::min<std::int64_t>(cap, kMaxBlockZ);
    tile[p] = user > 0 ? user : std::max<std::int64_t>(1, std::min(extent[p], cap));
    product *= tile[p];
  }

  if constexpr (rank == 1) {
    Kokkos::parallel_for("discount::apply",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, Index(extent[0])), functor);
  } else {
    using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<rank, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                         Kokkos::IndexType<Index>>;
    typename Policy::point_type lower{}, upper{}, tiles{};
    for (int p = 0; p < rank; ++p) {
      lower[p] = 0;
      upper[p] = extent[p];
      tiles[p] = tile[p];
    }
    Kokkos::parallel_for("discount::apply", Policy(exec, lower, upper, tiles), functor);
  }
}

}  // namespace detail
}  // namespace discount
