// The kernel: cv = multBy * discount over one slab, as a Kokkos MDRangePolicy
// spanning the configured parallel dims; the other dims are serial loops
// inside the functor (the seed's one-worker-per-date / per-id / per-element
// choices). Views are in the slab buffer's memory order; multBy is indexed
// through per-position strides (0 along date), so any axes order works
// without a transpose.
#pragma once

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/slicing.hpp"

namespace discount {

// GPUs map MDRange dimension 0 to threadIdx.x, so the fastest memory position
// must come first there (PLATFORM.md: 0.36 TB/s otherwise); host backends
// iterate the last dimension innermost.
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

template <int Mask, bool Reverse, class MultView, class InView, class OutView>
struct ApplyFunctor {
  MultView mult;  // flat [ids * nums] of the slab
  InView in;      // [e0][e1][e2], LayoutRight
  OutView out;    // may alias `in`
  std::int64_t ms0, ms1, ms2;

  static constexpr bool par0 = Mask & 1, par1 = Mask & 2, par2 = Mask & 4;
  static constexpr int rank = int(par0) + int(par1) + int(par2);
  static constexpr int pos0 = set_bit(Mask, 0), pos1 = set_bit(Mask, 1), pos2 = set_bit(Mask, 2);

  // The innermost serial position, if any: its loop issues kBatch loads
  // before the first store, so each thread keeps several loads in flight
  // even when `out` may alias `in` (in place).
  static constexpr int inner_serial = !par2 ? 2 : !par1 ? 1 : !par0 ? 0 : -1;
  static constexpr int kBatch = 4;

  KOKKOS_INLINE_FUNCTION void element(std::int64_t x, std::int64_t y, std::int64_t z) const {
    out(x, y, z) = mult(x * ms0 + y * ms1 + z * ms2) * in(x, y, z);
  }

  KOKKOS_INLINE_FUNCTION void serial_line(std::int64_t x, std::int64_t y, std::int64_t z) const {
    if constexpr (inner_serial < 0) {
      element(x, y, z);
    } else {
      const int position = inner_serial;  // extent() takes a reference: no ODR-use of the member
      const std::int64_t extent = std::int64_t(in.extent(position));
      std::int64_t v[3] = {x, y, z};
      std::int64_t j = 0;
      for (; j + kBatch <= extent; j += kBatch) {
        double product[kBatch];
        for (int u = 0; u < kBatch; ++u) {
          v[inner_serial] = j + u;
          product[u] = mult(v[0] * ms0 + v[1] * ms1 + v[2] * ms2) * in(v[0], v[1], v[2]);
        }
        for (int u = 0; u < kBatch; ++u) {
          v[inner_serial] = j + u;
          out(v[0], v[1], v[2]) = product[u];
        }
      }
      for (; j < extent; ++j) {
        v[inner_serial] = j;
        element(v[0], v[1], v[2]);
      }
    }
  }

  // Parallel positions are fixed by the caller; serial ones are looped here.
  KOKKOS_INLINE_FUNCTION void run(std::int64_t a, std::int64_t b, std::int64_t c) const {
    const std::int64_t a_end = (par0 || inner_serial == 0) ? a + 1 : std::int64_t(in.extent(0));
    const std::int64_t b_end = (par1 || inner_serial == 1) ? b + 1 : std::int64_t(in.extent(1));
    for (std::int64_t x = a; x < a_end; ++x)
      for (std::int64_t y = b; y < b_end; ++y) serial_line(x, y, c);
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    std::int64_t v[3] = {0, 0, 0};
    v[pos0] = i;
    run(v[0], v[1], v[2]);
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    std::int64_t v[3] = {0, 0, 0};
    v[Reverse ? pos1 : pos0] = i;
    v[Reverse ? pos0 : pos1] = j;
    run(v[0], v[1], v[2]);
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    if (Reverse) run(k, j, i);
    else run(i, j, k);
  }
};

template <class ExecSpace, int Mask, class MultView, class InView, class OutView>
void launch(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in,
            const OutView& out, const std::array<std::int64_t, 3>& ms) {
  constexpr bool reverse = iterate_reversed<ExecSpace>();
  using Functor = ApplyFunctor<Mask, reverse, MultView, InView, OutView>;
  const Functor functor{mult, in, out, ms[0], ms[1], ms[2]};
  constexpr int rank = Functor::rank;

  // Parallel memory positions in policy order.
  int order[3] = {Functor::pos0, Functor::pos1, Functor::pos2};
  if (reverse)
    for (int p = 0; p < rank / 2; ++p) std::swap(order[p], order[rank - 1 - p]);
  std::int64_t extent[3] = {1, 1, 1}, tile[3] = {1, 1, 1};
  for (int p = 0; p < rank; ++p) extent[p] = std::int64_t(in.extent(order[p]));

  // Auto tiles: on a GPU, up to 256 threads with the contiguous position on x;
  // on the host, about 2048 iterations per tile along the innermost positions.
  const std::int64_t target = reverse ? 256 : 2048;
  std::int64_t product = 1;
  for (int q = 0; q < rank; ++q) {
    const int p = reverse ? q : rank - 1 - q;  // fastest position first
    const std::int64_t user = slicing.tile[order[p]];
    tile[p] = user > 0 ? user : std::max<std::int64_t>(1, std::min(extent[p], target / product));
    product *= tile[p];
  }

  if constexpr (rank == 1) {
    Kokkos::parallel_for("discount::apply",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, extent[0]), functor);
  } else {
    using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<rank, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                         Kokkos::IndexType<std::int64_t>>;
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

template <class MemorySpace>
using SlabView = Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class MemorySpace>
using ConstSlabView =
    Kokkos::View<const double***, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class MemorySpace>
using ConstFlatView =
    Kokkos::View<const double*, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// out(x,y,z) = mult(x*ms[0] + y*ms[1] + z*ms[2]) * in(x,y,z), asynchronous on `exec`.
template <class ExecSpace, class MultView, class InView, class OutView>
void apply_mdrange(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in,
                   const OutView& out, const std::array<std::int64_t, 3>& mult_strides) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value, "first argument must be an execution space");
  static_assert(InView::rank == 3 && OutView::rank == 3 && MultView::rank == 1, "slab views are 3-D, multBy 1-D");
  switch (slicing.mask()) {
    case 1: detail::launch<ExecSpace, 1>(exec, slicing, mult, in, out, mult_strides); break;
    case 2: detail::launch<ExecSpace, 2>(exec, slicing, mult, in, out, mult_strides); break;
    case 3: detail::launch<ExecSpace, 3>(exec, slicing, mult, in, out, mult_strides); break;
    case 4: detail::launch<ExecSpace, 4>(exec, slicing, mult, in, out, mult_strides); break;
    case 5: detail::launch<ExecSpace, 5>(exec, slicing, mult, in, out, mult_strides); break;
    case 6: detail::launch<ExecSpace, 6>(exec, slicing, mult, in, out, mult_strides); break;
    case 7: detail::launch<ExecSpace, 7>(exec, slicing, mult, in, out, mult_strides); break;
    default: Kokkos::abort("discount::apply_mdrange: no parallel dimension");
  }
}

}  // namespace discount
