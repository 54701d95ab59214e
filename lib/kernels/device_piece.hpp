// memory.staging: none on a GPU: one piece of a slab (elements [first,
// first + count) of the packed slab; `piece` holds just those) multiplied
// in device memory by the resident multBy, as multiply_piece does on the host
// (kernels/piece_multiply.hpp): one IEEE multiply per element, the same bits.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/piece_multiply.hpp"

namespace discount {

template <class ExecSpace, class PieceView, class MultView>
void apply_piece(const ExecSpace& exec, const PieceView& piece, const MultView& mult, const PieceShape& shape,
                 std::int64_t first, std::int64_t count) {
  const std::int64_t e1 = shape.extent[1], e2 = shape.extent[2];
  const std::int64_t s0 = shape.mult_stride[0], s1 = shape.mult_stride[1], s2 = shape.mult_stride[2];
  Kokkos::parallel_for(
      "discount::apply_piece", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, count),
      KOKKOS_LAMBDA(const std::int64_t j) {
        const std::int64_t e = first + j, row = e / e2;
        piece(j) *= mult((row / e1) * s0 + (row % e1) * s1 + (e % e2) * s2);
      });
}

}  // namespace discount
