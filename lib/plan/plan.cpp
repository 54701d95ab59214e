#include "plan/plan.hpp"

#include <algorithm>
#include <cstdio>
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

  auto fit = [&](const char* which, std::uint64_t budget, int buffers, std::uint64_t fixed) {
    const std::uint64_t needed = fixed + resident + static_cast<std::uint64_t>(buffers) * unit;
    std::ostringstream detail;
    detail << buffers << " buffer(s) x " << format_bytes(unit) << " for one " << axis_name(req.chunk_axis);
    if (resident) detail << " + multBy " << format_bytes(resident);
    if (fixed) detail << " + O_DIRECT staging " << format_bytes(fixed);
    if (budget < needed) too_small(which, budget, needed, detail.str());
    return static_cast<std::int64_t>((budget - resident - fixed) / (static_cast<std::uint64_t>(buffers) * unit));
  };

  std::int64_t count = fit("host_budget", req.host_budget, plan.host_buffers, req.staging_bytes);
  if (req.device_copies) count = std::min(count, fit("device_budget", req.device_budget, plan.device_buffers, 0));
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
  plan.host_bytes = req.staging_bytes + resident + plan.host_buffers * per_buffer;
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
      << format_bytes(host_bytes);
  if (r.staging_bytes) out << " (incl. " << format_bytes(r.staging_bytes) << " O_DIRECT staging)";
  out << " of budget " << format_bytes(r.host_budget) << "\n";
  if (r.device_copies)
    out << "device buffers " << device_buffers << " x " << format_bytes(slab_bytes + slab_mult_bytes)
        << ", device total " << format_bytes(device_bytes) << " of budget " << format_bytes(r.device_budget) << "\n";
  else
    out << "device buffers none (kernel runs in host space, no copies)\n";
  // The same counts as the run report's stages.
  out << "bytes per stage";
  const char* sep = " ";
  for (const auto& stage : predict(*this, Limits{})) {
    Stage named = Stage::read;
    stage_named(stage.stage, named);
    out << sep << stage_label(named) << " " << format_bytes(stage.bytes);
    sep = ", ";
  }
  out << "\n";
  return out.str();
}

std::vector<StagePrediction> predict(const Plan& plan, const Limits& limits) {
  std::vector<int> all(plan.slabs.size());
  for (std::size_t s = 0; s < all.size(); ++s) all[s] = static_cast<int>(s);
  return predict(plan, limits, all);
}

SlabTraffic traffic(const Plan& plan, const Slab& slab) {
  SlabTraffic t;
  t.elements = static_cast<std::uint64_t>(slab.elements());
  t.mult_elements = static_cast<std::uint64_t>(slab.ids.size()) * static_cast<std::uint64_t>(slab.nums);
  t.mult_per_slab = plan.mult_per_slab;
  t.element_bytes = plan.request.element_bytes;
  return t;
}

std::vector<StagePrediction> predict(const Plan& plan, const Limits& limits, const std::vector<int>& slabs) {
  std::vector<StagePrediction> stages;
  for (Stage stage : pipeline_stages(plan.request.device_copies)) {
    StagePrediction p;
    p.stage = stage_name(stage);
    p.bytes = resident_stage_bytes(stage, plan.mult_bytes, plan.mult_per_slab);
    for (int index : slabs)
      p.bytes += stage_bytes(stage, traffic(plan, plan.slabs.at(static_cast<std::size_t>(index))));
    const LinkLimit& link = limits.of(stage);
    if (link.known()) {
      p.gb_per_s = link.gb_per_s;
      p.source = link.source;
      p.seconds = static_cast<double>(p.bytes) / (link.gb_per_s * 1e9);
    }
    stages.push_back(p);
  }
  return stages;
}

double predicted_wall_seconds(const std::vector<StagePrediction>& stages) {
  double wall = -1;
  for (const auto& s : stages)
    if (s.seconds >= 0) wall = std::max(wall, s.seconds);
  return wall;
}

double predicted_serial_seconds(const std::vector<StagePrediction>& stages) {
  double sum = 0;
  bool any = false;
  for (const auto& s : stages)
    if (s.seconds >= 0) {
      sum += s.seconds;
      any = true;
    }
  return any ? sum : -1;
}

WallPrediction predict_wall(const Plan& plan, const std::vector<StagePrediction>& stages, const FixedCost& fixed) {
  return predict_wall(plan, stages, fixed, static_cast<int>(plan.slabs.size()));
}

WallPrediction predict_wall(const Plan& plan, const std::vector<StagePrediction>& stages, const FixedCost& fixed,
                            int slabs) {
  WallPrediction w;
  w.slabs = slabs;
  w.fixed_known = fixed.seconds >= 0;
  w.fixed_seconds = w.fixed_known ? fixed.seconds : 0;
  for (const auto& s : stages)
    if (s.seconds < 0) w.unknown.push_back(s.stage);
  if (!w.unknown.empty() || stages.empty()) return w;

  // Per slab, on average: each stage's bytes less the resident multBy's read.
  const double n = std::max(1, slabs);
  double all = 0, device_path = 0, slowest = 0;
  for (const auto& s : stages) {
    Stage stage = Stage::read;
    stage_named(s.stage, stage);
    const std::uint64_t resident = resident_stage_bytes(stage, plan.mult_bytes, plan.mult_per_slab);
    const double resident_seconds = s.bytes ? s.seconds * static_cast<double>(resident) / s.bytes : 0.0;
    w.resident_seconds += resident_seconds;
    const double per_slab = (s.seconds - resident_seconds) / n;
    all += per_slab;
    if (stage == Stage::h2d || stage == Stage::kernel || stage == Stage::d2h) device_path += per_slab;
    if (per_slab > slowest) {
      slowest = per_slab;
      w.pace = s.stage;
    }
  }
  w.first_slab_seconds = all;
  // A host buffer is held from its read to its write, a device buffer from
  // its upload to its download: with fewer buffers than that takes, slabs
  // wait for one.
  double period = slowest;
  const double host_ring = all / std::max(1, plan.host_buffers);
  const double device_ring = plan.device_buffers > 0 ? device_path / plan.device_buffers : 0.0;
  if (std::max(host_ring, device_ring) > period) {
    period = std::max(host_ring, device_ring);
    w.pace = "buffers";
  }
  w.period_seconds = period;
  w.seconds = w.fixed_seconds + w.resident_seconds + w.first_slab_seconds + (n - 1) * period;
  return w;
}

std::vector<Slab> probe_pieces(const Plan& plan, std::uint64_t piece_bytes, std::uint64_t max_bytes) {
  std::vector<Slab> pieces;
  const auto& r = plan.request;
  const bool by_date = r.chunk_axis == Axis::date;
  const std::uint64_t row = static_cast<std::uint64_t>(r.nums) * r.element_bytes;  // one date x one id
  std::uint64_t covered = 0;
  for (const Slab& slab : plan.slabs) {
    const Range along = by_date ? slab.dates : slab.ids, across = by_date ? slab.ids : slab.dates;
    const std::uint64_t unit = static_cast<std::uint64_t>(across.size()) * row;  // one step along
    // Steps along per piece, or (one step too large) rows across per piece.
    const std::int64_t step_along =
        unit <= piece_bytes ? std::max<std::int64_t>(1, static_cast<std::int64_t>(piece_bytes / unit)) : 1;
    const std::int64_t step_across =
        unit <= piece_bytes ? across.size() : std::max<std::int64_t>(1, static_cast<std::int64_t>(piece_bytes / row));
    for (std::int64_t a = along.begin; a < along.end; a += step_along)
      for (std::int64_t c = across.begin; c < across.end; c += step_across) {
        const Range pa{a, std::min(along.end, a + step_along)}, pc{c, std::min(across.end, c + step_across)};
        Slab piece;
        piece.index = static_cast<int>(pieces.size());
        piece.dates = by_date ? pa : pc;
        piece.ids = by_date ? pc : pa;
        piece.nums = slab.nums;
        pieces.push_back(piece);
        covered += static_cast<std::uint64_t>(piece.elements()) * r.element_bytes;
        if (covered >= max_bytes) return pieces;
      }
  }
  return pieces;
}

std::string describe_prediction(const Plan& plan, const std::vector<StagePrediction>& stages,
                                const WallPrediction& wall) {
  std::ostringstream out;
  char line[256];
  out << "predicted      stage           bytes   GB/s    seconds  rate from\n";
  for (const auto& s : stages) {
    char limit[32] = "-", seconds[32] = "-";
    if (s.gb_per_s > 0) std::snprintf(limit, sizeof limit, "%.2f", s.gb_per_s);
    if (s.seconds >= 0) std::snprintf(seconds, sizeof seconds, "%.3f", s.seconds);
    std::snprintf(line, sizeof line, "               %-8s %8.3f GB %6s %10s  ", s.stage.c_str(), s.bytes / 1e9, limit,
                  seconds);
    out << line << (s.source.empty() ? "unknown" : s.source) << "\n";
  }
  if (!wall.unknown.empty()) {
    std::string names;
    for (const auto& name : wall.unknown) names += (names.empty() ? "" : ", ") + name;
    out << "predicted wall cannot predict the time: no rate known for " << names
        << " (run `discount_app plan` without --no-measure to measure them, run the job once with `report:` set,"
           " or set them under limits:)\n";
    return out.str();
  }
  std::snprintf(line, sizeof line, "predicted wall %.2f s", wall.seconds);
  out << line;
  if (!wall.fixed_known) out << " plus start-up and finish (not known without a measurement or an earlier report)";
  out << "\n";
  if (wall.fixed_known) {
    std::snprintf(line, sizeof line, "               %.3f s start-up and finish (input, Kokkos, output file)\n",
                  wall.fixed_seconds);
    out << line;
  }
  if (wall.resident_seconds > 0) {
    std::snprintf(line, sizeof line, "               %.3f s reading the resident multBy before the first slab\n",
                  wall.resident_seconds);
    out << line;
  }
  std::snprintf(line, sizeof line, "               %.3f s the first slab through every stage (fill and drain)\n",
                wall.first_slab_seconds);
  out << line;
  if (wall.slabs > 1) {
    const bool overlap = plan.request.pipeline_depth > 1;
    std::snprintf(line, sizeof line, "               %.3f s %d more slab(s) at %.3f s each (%s)\n",
                  (wall.slabs - 1) * wall.period_seconds, wall.slabs - 1, wall.period_seconds,
                  !overlap                   ? "pipeline_depth 1: one stage after another"
                  : wall.pace == "buffers" ? "stages overlapped; the staging buffers set the pace"
                                           : ("stages overlapped; " + wall.pace + " sets the pace").c_str());
    out << line;
  }
  return out.str();
}

std::string check_machine_memory(const Plan& plan, const MachineMemory& machine) {
  struct Side {
    const char* key;
    const char* what;
    std::uint64_t budget, needed, available;
  };
  std::vector<Side> sides{{"memory.host_budget", "host memory available (MemAvailable and cgroup limit)",
                           plan.request.host_budget, plan.host_bytes, machine.host_available}};
  if (plan.request.device_copies)
    sides.push_back({"memory.device_budget", "free device memory", plan.request.device_budget, plan.device_bytes,
                     machine.device_free});
  std::string warning;
  for (const Side& side : sides) {
    if (side.available == 0) continue;  // unknown
    if (side.needed > side.available)
      throw config_error(std::string(side.key) + " = " + format_bytes(side.budget) + ": the plan needs " +
                         format_bytes(side.needed) + " but only " + format_bytes(side.available) + " of " +
                         side.what + " is there; lower it (a percentage such as 80% follows the machine)");
    if (side.budget > side.available && warning.empty())
      warning = std::string(side.key) + " = " + format_bytes(side.budget) + " is more than the " +
                format_bytes(side.available) + " of " + side.what + "; this job needs only " +
                format_bytes(side.needed) + ", so it runs";
  }
  return warning;
}

}  // namespace discount
