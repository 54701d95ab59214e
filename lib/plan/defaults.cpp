#include "plan/defaults.hpp"

#include <algorithm>

namespace discount {

std::uint64_t auto_max_slab(std::uint64_t job_bytes, int ring_buffers) {
  std::uint64_t most = kAutoSlabMax;
  if (ring_buffers > 0)
    most = std::max(kAutoSlabMin, std::min(most, kAutoRing / static_cast<std::uint64_t>(ring_buffers)));
  return std::clamp(job_bytes / static_cast<std::uint64_t>(kAutoSlabs), kAutoSlabMin, most);
}

std::uint64_t auto_max_slab_unstaged(std::uint64_t job_bytes, int threads) {
  const auto slabs = static_cast<std::uint64_t>(kSlabsPerThread * std::max(1, threads));
  return std::clamp(job_bytes / slabs, kAutoSlabMin, kAutoSlabMax);
}

SlabReadShape slab_read_shape(const Plan& plan, const std::array<Axis, 3>& file_axes,
                              const std::array<std::int64_t, 3>& source) {
  const PlanRequest& r = plan.request;
  const bool by_date = r.chunk_axis == Axis::date;
  // The largest slab's extent on each axis, by Axis value.
  const std::array<std::int64_t, 3> count{by_date ? plan.slab_extent : r.dates, by_date ? r.ids : plan.slab_extent,
                                          r.nums};
  std::array<std::int64_t, 3> c{}, d{};  // in the file's order
  for (int j = 0; j < 3; ++j) {
    c[j] = count[static_cast<int>(file_axes[j])];
    d[j] = source[static_cast<int>(file_axes[j])];
  }
  // As io/posix/box.hpp's box_runs merges them: trailing axes spanned fully join one run.
  std::int64_t run = c[2];
  if (c[2] == d[2]) {
    run *= c[1];
    if (c[1] == d[1]) run *= c[0];
  }
  SlabReadShape shape;
  const std::int64_t elements = c[0] * c[1] * c[2];
  shape.run_bytes = static_cast<std::uint64_t>(run) * r.element_bytes;
  shape.runs = run > 0 ? static_cast<std::uint64_t>(elements / run) : 0;
  return shape;
}

}  // namespace discount
