// The kernel: cv = multBy * discount over one slab, asynchronous on an
// execution space instance. Views are in the slab buffer's memory order;
// multBy is indexed through per-position strides (0 along date), so any axes
// order works without a transpose. Three loop families, one file each under
// kernels/detail/, picked per slab:
//   host_loops.hpp  host spaces: one contiguous share of the slab per thread;
//   row_pairs.hpp   GPUs, [id, num] over [date][id][num]: 16-byte row pairs;
//   mdrange.hpp     otherwise: Range/MDRange policy over the parallel dims,
//                   serial loops over the others.
// tuning.hpp holds the families' knobs that only benchmarks and tests turn.
#pragma once

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>

#include "common/error.hpp"
#include "backend/gpu_runtime.hpp"
#include "kernels/detail/host_loops.hpp"
#include "kernels/detail/mdrange.hpp"
#include "kernels/detail/row_pairs.hpp"
#include "kernels/detail/tuning.hpp"
#include "kernels/slicing.hpp"

namespace discount {

namespace detail {

template <class ExecSpace, class Index, class MultView, class InView, class OutView>
void dispatch(const ExecSpace& exec, const Slicing& slicing, const Tuning& tuning, const MultView& mult,
              const InView& in, const OutView& out, const std::array<std::int64_t, 3>& ms) {
  if constexpr (iterate_reversed<ExecSpace>()) {
    if (row_pairs_apply(slicing, tuning, mult, in, out, ms))
      return launch_row_pairs<ExecSpace, Index>(exec, tuning, mult, in, out);
  } else {
    if (tuning.host_loops && slicing.mask() != 0) return launch_host(exec, slicing, tuning, mult, in, out, ms);
  }
  switch (slicing.mask()) {
    case 1: launch<ExecSpace, 1, Index>(exec, slicing, mult, in, out, ms); break;
    case 2: launch<ExecSpace, 2, Index>(exec, slicing, mult, in, out, ms); break;
    case 3: launch<ExecSpace, 3, Index>(exec, slicing, mult, in, out, ms); break;
    case 4: launch<ExecSpace, 4, Index>(exec, slicing, mult, in, out, ms); break;
    case 5: launch<ExecSpace, 5, Index>(exec, slicing, mult, in, out, ms); break;
    case 6: launch<ExecSpace, 6, Index>(exec, slicing, mult, in, out, ms); break;
    case 7: launch<ExecSpace, 7, Index>(exec, slicing, mult, in, out, ms); break;
    default: throw config_error("compute.parallel_dims: at least one axis must be parallel");
  }
}

}  // namespace detail

// Kokkos 3.4 does not check kernel launches: a bad launch computes nothing
// and says nothing. Call after a fence; throws std::runtime_error.
inline void check_device_errors(const char* what) { gpu::check_last_error(what); }

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
                   const OutView& out, const std::array<std::int64_t, 3>& mult_strides,
                   const detail::Tuning& tuning = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value, "first argument must be an execution space");
  static_assert(InView::rank == 3 && OutView::rank == 3 && MultView::rank == 1, "slab views are 3-D, multBy 1-D");
  // 32-bit index arithmetic whenever every offset fits (always, for slabs
  // under 16 GiB); 64-bit otherwise.
  const bool narrow = in.span() < std::size_t{1} << 31 && mult.span() < std::size_t{1} << 31;
  if (narrow)
    detail::dispatch<ExecSpace, int>(exec, slicing, tuning, mult, in, out, mult_strides);
  else
    detail::dispatch<ExecSpace, std::int64_t>(exec, slicing, tuning, mult, in, out, mult_strides);
}

}  // namespace discount
