// The GPU loop family for [id, num] parallel over a [date][id][num] slab:
// 16-byte pairs of the (id, num) row, each thread walking a chunk of dates.
// Kernel label: discount::apply_row_pairs.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

#include "backend/gpu_runtime.hpp"
#include "kernels/detail/mdrange.hpp"
#include "kernels/detail/tuning.hpp"
#include "kernels/slicing.hpp"

namespace discount::detail {

// [id, num] parallel, date serial, in the file order [date][id][num]: id and
// num are one contiguous row per date, and multBy is that row. On a GPU each
// thread takes two neighbouring elements of the row (16-byte loads and
// stores), keeps its multBy pair in registers, and walks a chunk of `chunk`
// dates, four loads ahead. The work is ordered group by group: a group's
// `group` neighbouring pairs take all their chunks (chunk 0 of every pair,
// then chunk 1, ...) before the next group starts. So the GPU works on a few
// dates of a narrow band of rows at a time, close to a copy's linear stream
// (short chunks beat one thread walking all dates: docs/performance.md),
// while the group's multBy stays in L2 between its chunks.
struct alignas(16) Pair {
  double first, second;
};

template <class Index>
struct RowPairsFunctor {
  static constexpr int kBatch = 4;
  const double* mult;
  const double* in;
  double* out;  // may alias `in`
  Index step;   // pairs per date
  Index dates;
  Index chunk;   // dates per thread
  Index chunks;  // ceil(dates / chunk)
  Index group;   // pairs per group, at most `step`

  Index work() const { return (step + group - 1) / group * group * chunks; }

  KOKKOS_INLINE_FUNCTION void operator()(Index t) const {
    const Index span = group * chunks;
    const Index g = t / span;
    const Index r = t - g * span;
    const Index c = r / group;
    const Index p = g * group + (r - c * group);
    if (p >= step) return;
    const Pair m = reinterpret_cast<const Pair*>(mult)[p];
    const Pair* src = reinterpret_cast<const Pair*>(in) + p;
    Pair* dst = reinterpret_cast<Pair*>(out) + p;
    const Index d0 = c * chunk;
    const Index d1 = d0 + chunk < dates ? d0 + chunk : dates;
    for (Index d = d0; d < d1; d += kBatch) {
      Pair v[kBatch] = {};
      for (int u = 0; u < kBatch; ++u)
        if (d + u < d1) v[u] = src[(d + u) * step];
      for (int u = 0; u < kBatch; ++u)
        if (d + u < d1) dst[(d + u) * step] = Pair{m.first * v[u].first, m.second * v[u].second};
    }
  }
};

// The L2 size in bytes of the GPU that runs `ExecSpace`'s kernels, 0 when
// unknown or for host spaces (asked once: the kernels run on the thread that
// initialised Kokkos, whose current device is Kokkos's).
template <class ExecSpace>
std::int64_t l2_cache_bytes(const ExecSpace&) {
  if constexpr (!iterate_reversed<ExecSpace>()) {
    return 0;
  } else {
    static const std::int64_t bytes = gpu::l2_cache_bytes(gpu::current_device());
    return bytes;
  }
}

// True when the row-pairs path computes exactly what the generic functor would.
template <class MultView, class InView, class OutView>
bool row_pairs_apply(const Slicing& slicing, const Tuning& tuning, const MultView& mult, const InView& in,
                     const OutView& out, const std::array<std::int64_t, 3>& ms) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(Pair) == 0; };
  const std::int64_t row = std::int64_t(in.extent(1) * in.extent(2));
  return tuning.allow_row_pairs && slicing.mask() == 6 && ms[0] == 0 && ms[1] == std::int64_t(in.extent(2)) &&
         ms[2] == 1 && row % 2 == 0 && row > 0 && aligned(mult.data()) && aligned(in.data()) && aligned(out.data());
}

template <class ExecSpace, class Index, class MultView, class InView, class OutView>
void launch_row_pairs(const ExecSpace& exec, const Tuning& tuning, const MultView& mult, const InView& in,
                      const OutView& out) {
  const std::int64_t dates = std::int64_t(in.extent(0)), step = std::int64_t(in.extent(1) * in.extent(2) / 2);
  const std::int64_t wanted = tuning.row_pairs_chunk > 0 ? std::min(tuning.row_pairs_chunk, dates) : dates;
  const std::int64_t chunk = std::max<std::int64_t>(1, wanted);
  const std::int64_t group = std::min(
      step, tuning.row_pairs_group > 0 ? tuning.row_pairs_group : row_pairs_auto_group(l2_cache_bytes(exec), chunk));
  const RowPairsFunctor<Index> functor{
      mult.data(), in.data(), out.data(), Index(step), Index(dates), Index(chunk), Index((dates + chunk - 1) / chunk),
      Index(group)};
  Kokkos::parallel_for("discount::apply_row_pairs",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, functor.work()), functor);
}

}  // namespace discount::detail
