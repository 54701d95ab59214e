// compute.kernel: blas. The slab seen as a column-major matrix with one
// column per date and multBy as the vector: KokkosBlas::mult computes
// C = 0*C + 1 * A .* B column by column. Needs date as the outermost axis and
// id before num (checked by the caller). Kokkos Kernels 3.4's mult takes no
// execution space instance: it runs on the default instance (on CUDA, the
// legacy stream, which our non-blocking streams do not wait for), so this
// function fences before and after and returns with the result complete.
#pragma once

#ifndef DISCOUNT_HAVE_KOKKOSKERNELS
#error "kernels/blas.hpp needs Kokkos Kernels (DISCOUNT_HAVE_KOKKOSKERNELS); include it under #ifdef"
#endif

#include <KokkosBlas1_mult.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>

#include "kernels/apply.hpp"

namespace discount {

template <class ExecSpace, class MultView, class InView, class OutView>
void apply_blas(const ExecSpace& exec, const MultView& mult, const InView& in, const OutView& out) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value, "first argument must be an execution space");
  using Memory = typename InView::memory_space;
  using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using ConstMatrix = Kokkos::View<const double**, Kokkos::LayoutLeft, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const auto rows = static_cast<std::size_t>(in.extent(1) * in.extent(2));
  const auto cols = static_cast<std::size_t>(in.extent(0));
  if constexpr (!iterate_reversed<ExecSpace>()) {
    // Host spaces: KokkosBlas::mult gives each thread rows that it walks across
    // every column, far from a copy's speed (docs/performance.md). The same
    // C = A .* B, column by column, runs through the host loops with every
    // position parallel (kernels/apply.hpp).
    apply_mdrange(exec, Slicing{}, mult, in, out, {0, std::int64_t(in.extent(2)), 1});
    exec.fence();
    return;
  }
  exec.fence();  // the views' producers may run on another instance
  KokkosBlas::mult(0.0, Matrix(out.data(), rows, cols), 1.0, mult, ConstMatrix(in.data(), rows, cols));
  // mult ran on the default instance; consumers wait on `exec`, so finish here.
  typename Memory::execution_space().fence();
}

}  // namespace discount
