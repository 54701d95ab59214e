#include "plan/plan.hpp"

#include <algorithm>
#include <sstream>

#include "common/error.hpp"

namespace discount {

std::uint64_t Plan::total_elements() const {
  return static_cast<std::uint64_t>(request.dates) * request.ids * request.nums;
}
std::uint64_t Plan::input_bytes() const { return total_elements() * request.element_bytes + mult_bytes; }
std::uint64_t Plan::output_bytes() const { return total_elements() * request.element_bytes; }

namespace {

[[noreturn]] void too_small(const char* which, std::uint64_t budget, std::uint64_t needed,
                            const std::string& detail) {
  throw config_error(std::string("memory.") + which + " = " + format_bytes(budget) +
                     " is too small: one minimal slab needs " + format_bytes(needed) + " (" + detail +
                     "); raise the budget, lower memory.pipeline_depth or change memory.chunk_axis");
}

}  // namespace

Plan make_plan(const PlanRequest& req) {
  if (req.dates <= 0 || req.ids <= 0 || req.nums <= 0)
    throw data_error("empty dimension: dates=" + std::to_string(req.dates) + " ids=" + std::to_string(req.ids) +
                     " nums=" + std::to_string(req.nums) + "; nothing to compute");
  if (req.pipeline_depth < 1) throw config_error("memory.pipeline_depth must be at least 1");

  Plan plan;
  plan.request = req;
  const std::uint64_t elem = req.element_bytes;
  const bool by_date = req.chunk_axis == Axis::date;
  const std::int64_t extent = by_date ? req.dates : req.ids;
  plan.mult_bytes = static_cast<std::uint64_t>(req.ids) * req.nums * elem;
  plan.mult_per_slab = !by_date;

  // Bytes one step along the chunk axis adds to a slab, and what stays resident.
  const std::uint64_t unit_data = static_cast<std::uint64_t>(by_date ? req.ids : req.dates) * req.nums * elem;
  const std::uint64_t unit_mult = by_date ? 0 : static_cast<std::uint64_t>(req.nums) * elem;
  const std::uint64_t unit = unit_data + unit_mult;
  const std::uint64_t resident = by_date ? plan.mult_bytes : 0;

  plan.host_buffers = req.pipeline_depth;
  // Upload, kernel and download each hold one device buffer; a fourth (depth
  // 4 and up) lets the upload run one slab ahead of a late download.
  plan.device_buffers = req.device_copies ? std::min(req.pipeline_depth, 4) : 0;

  auto fit = [&](const char* which, std::uint64_t budget, int buffers) {
    const std::uint64_t needed = resident + static_cast<std::uint64_t>(buffers) * unit;
    std::ostringstream detail;
    detail << buffers << " buffer(s) x " << format_bytes(unit) << " for one " << axis_name(req.chunk_axis);
    if (resident) detail << " + multBy " << format_bytes(resident);
    if (budget < needed) too_small(which, budget, needed, detail.str());
    return static_cast<std::int64_t>((budget - resident) / (static_cast<std::uint64_t>(buffers) * unit));
  };

  std::int64_t count = fit("host_budget", req.host_budget, plan.host_buffers);
  if (req.device_copies) count = std::min(count, fit("device_budget", req.device_budget, plan.device_buffers));
  const std::int64_t cap = std::max<std::int64_t>(1, static_cast<std::int64_t>(req.max_slab / unit_data));
  count = std::max<std::int64_t>(1, std::min({count, cap, extent}));
  plan.slab_extent = count;

  for (std::int64_t begin = 0, index = 0; begin < extent; begin += count, ++index) {
    Slab slab;
    slab.index = static_cast<int>(index);
    const Range along{begin, std::min(extent, begin + count)};
    slab.dates = by_date ? along : Range{0, req.dates};
    slab.ids = by_date ? Range{0, req.ids} : along;
    slab.nums = req.nums;
    plan.slabs.push_back(slab);
  }
  plan.slab_bytes = static_cast<std::uint64_t>(count) * unit_data;
  plan.slab_mult_bytes = plan.mult_per_slab ? static_cast<std::uint64_t>(count) * unit_mult : 0;
  const std::uint64_t per_buffer = plan.slab_bytes + plan.slab_mult_bytes;
  plan.host_bytes = resident + plan.host_buffers * per_buffer;
  plan.device_bytes = req.device_copies ? resident + plan.device_buffers * per_buffer : 0;
  return plan;
}

std::string Plan::describe() const {
  std::ostringstream out;
  const auto& r = request;
  out << "shape          dates=" << r.dates << " ids=" << r.ids << " nums=" << r.nums << " (float64)\n";
  out << "chunk axis     " << axis_name(r.chunk_axis) << ", " << slab_extent << " per slab, " << slabs.size()
      << " slab(s)";
  if (!slabs.empty()) {
    const Slab& last = slabs.back();
    const std::int64_t last_extent = r.chunk_axis == Axis::date ? last.dates.size() : last.ids.size();
    if (last_extent != slab_extent) out << " (last slab " << last_extent << ")";
  }
  out << "\n";
  out << "slab           " << format_bytes(slab_bytes) << " of discount";
  if (mult_per_slab) out << " + " << format_bytes(slab_mult_bytes) << " of multBy";
  out << "\n";
  out << "multBy         " << format_bytes(mult_bytes) << (mult_per_slab ? " (streamed with the slabs)" : " (resident)")
      << "\n";
  out << "host buffers   " << host_buffers << " x " << format_bytes(slab_bytes + slab_mult_bytes) << ", host total "
      << format_bytes(host_bytes) << " of budget " << format_bytes(r.host_budget) << "\n";
  if (r.device_copies)
    out << "device buffers " << device_buffers << " x " << format_bytes(slab_bytes + slab_mult_bytes)
        << ", device total " << format_bytes(device_bytes) << " of budget " << format_bytes(r.device_budget) << "\n";
  else
    out << "device buffers none (kernel runs in host space, no copies)\n";
  out << "bytes per stage read " << format_bytes(input_bytes());
  if (r.device_copies)
    out << ", H2D " << format_bytes(input_bytes()) << ", D2H " << format_bytes(output_bytes());
  out << ", kernel " << format_bytes(input_bytes() + output_bytes()) << ", write " << format_bytes(output_bytes())
      << "\n";
  return out.str();
}

}  // namespace discount
