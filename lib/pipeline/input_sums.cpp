#include "pipeline/input_sums.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "io/records/checksum.hpp"

namespace discount {

std::uint64_t discount_sum(const double* buffer, const InputShape& shape, const std::array<Axis, 3>& axes, Range dates,
                           Range ids) {
  const FileBox box = discount_box(shape, axes, dates, ids);
  return box_sum(buffer, box.dims, box.start, box.count, SumKey::discount);
}

std::uint64_t multiplier_sum(const double* rows, Range ids, std::int64_t nums) {
  return box_sum(rows, {1, 1, (ids.end) * nums}, {0, 0, ids.begin * nums}, {1, 1, ids.size() * nums},
                 SumKey::multiplier);
}

std::function<InputSums(std::int64_t, std::int64_t)> input_sums_reader(InputSource& input, const PipelineSpec& spec,
                                                                       const Plan& plan) {
  const bool by_date = plan.request.chunk_axis == Axis::date;
  const std::int64_t nums = plan.request.nums;
  const Range all_dates = spec.dates, all_ids = spec.ids;
  const std::uint64_t piece = std::max<std::uint64_t>(plan.slab_bytes, sizeof(double));
  // Date ranges all use the whole selection's multBy: summed once, when first needed.
  auto whole_mult = std::make_shared<std::optional<std::uint64_t>>();
  return [&input, by_date, nums, all_dates, all_ids, piece, whole_mult](std::int64_t begin, std::int64_t end) {
    InputSums sums;
    const std::int64_t unit_elements = (by_date ? all_ids.size() : all_dates.size()) * nums;
    const std::int64_t per_piece =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(piece / sizeof(double)) / unit_elements);
    std::vector<double> buffer;
    const auto mult_rows = [&](Range ids) {  // ids absolute
      std::uint64_t sum = 0;
      const std::int64_t rows = std::max<std::int64_t>(1, static_cast<std::int64_t>(piece / sizeof(double)) / nums);
      for (std::int64_t i = ids.begin; i < ids.end; i += rows) {
        const Range part{i, std::min(ids.end, i + rows)};
        buffer.resize(static_cast<std::size_t>(part.size() * nums));
        input.read_multiplier(part, buffer.data());
        sum += multiplier_sum(buffer.data(), part, nums);
      }
      return sum;
    };
    for (std::int64_t u = begin; u < end; u += per_piece) {
      const Range units{u, std::min(end, u + per_piece)};
      const Range abs{(by_date ? all_dates.begin : all_ids.begin) + units.begin,
                      (by_date ? all_dates.begin : all_ids.begin) + units.end};
      const Range dates = by_date ? abs : all_dates, ids = by_date ? all_ids : abs;
      buffer.resize(static_cast<std::size_t>(dates.size() * ids.size() * nums));
      input.read_discount(dates, ids, buffer.data());
      sums.disc += discount_sum(buffer.data(), input.shape(), input.axes(), dates, ids);
      if (!by_date) sums.mult += mult_rows(ids);
    }
    if (by_date) {
      if (!*whole_mult) *whole_mult = mult_rows(all_ids);
      sums.mult = **whole_mult;
    }
    sums.known = true;
    return sums;
  };
}

}  // namespace discount
