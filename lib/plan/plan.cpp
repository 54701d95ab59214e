#include "plan/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/error.hpp"
#include "common/sizes.hpp"

namespace discount {

std::uint64_t Plan::total_elements() const {
  return static_cast<std::uint64_t>(request.dates) * request.ids * request.nums;
}
std::uint64_t Plan::input_bytes() const { return total_elements() * request.element_bytes + mult_bytes; }
std::uint64_t Plan::output_bytes() const { return total_elements() * request.output_bytes; }

namespace {

// What one step along the chunk axis costs, and what a budget must hold for
// one minimal slab: the single place both make_plan and
// minimal_slab_shortfall take these sizes from.
struct Sizing {
  std::uint64_t unit_data = 0;  // discount bytes of one date (or id) of a slab
  std::uint64_t unit_mult = 0;  // multBy bytes travelling with one id (id slabs)
  std::uint64_t unit = 0;       // both
  std::uint64_t resident = 0;   // multBy kept for the whole run (date slabs)
};

Sizing sizing(const PlanRequest& req) {
  Sizing s;
  const std::uint64_t elem = req.element_bytes;
  const bool by_date = req.chunk_axis == Axis::date;
  s.unit_data = static_cast<std::uint64_t>(by_date ? req.ids : req.dates) * req.nums * elem;
  s.unit_mult = by_date ? 0 : static_cast<std::uint64_t>(req.nums) * elem;
  s.unit = s.unit_data + s.unit_mult;
  s.resident = by_date ? static_cast<std::uint64_t>(req.ids) * req.nums * elem : 0;
  return s;
}

int host_buffer_count(const PlanRequest& req) { return req.unstaged ? 1 : req.pipeline_depth; }
// Upload, kernel and download each hold one device buffer; a fourth (depth
// 4 and up) lets the upload run one slab ahead of a late download.
// memory.staging: none: no device slabs, each I/O thread has its device pieces.
int device_buffer_count(const PlanRequest& req) {
  return req.device_copies && !req.unstaged ? std::min(req.pipeline_depth, 4) : 0;
}

// One budget against one minimal slab.
struct BudgetSide {
  const char* which;  // "host_budget" | "device_budget"
  std::uint64_t budget = 0;
  int buffers = 0;
  std::uint64_t fixed = 0;   // O_DIRECT staging (host)
  std::uint64_t needed = 0;  // fixed + resident + buffers x unit
  std::string detail;        // "3 buffer(s) x 1.90 GiB for one date + multBy 12 MiB"
};

std::vector<BudgetSide> budget_sides(const PlanRequest& req, const Sizing& s) {
  std::vector<BudgetSide> sides{{"host_budget",
                                 req.host_budget,
                                 host_buffer_count(req),
                                 req.staging_bytes + req.read_bytes + req.piece_bytes,
                                 0,
                                 {}}};
  if (req.device_copies) sides.push_back({"device_budget", req.device_budget, device_buffer_count(req), 0, 0, {}});
  for (BudgetSide& side : sides) {
    side.needed = side.fixed + s.resident + static_cast<std::uint64_t>(side.buffers) * s.unit;
    std::ostringstream detail;
    detail << side.buffers << " buffer(s) x " << format_bytes(s.unit) << " for one " << axis_name(req.chunk_axis);
    if (s.resident) detail << " + multBy " << format_bytes(s.resident);
    if (side.fixed && req.staging_bytes) detail << " + O_DIRECT staging " << format_bytes(req.staging_bytes);
    if (side.fixed && req.read_bytes) detail << " + HDF5 reading " << format_bytes(req.read_bytes);
    if (side.fixed && req.piece_bytes) detail << " + piece buffers " << format_bytes(req.piece_bytes);
    side.detail = detail.str();
  }
  return sides;
}

[[noreturn]] void too_small(const PlanRequest& req, const BudgetSide& side) {
  std::string fix = "raise the budget, lower memory.pipeline_depth or change memory.chunk_axis";
  if (!req.chunk_axis_kept_from.empty())
    fix = "raise the budget or lower memory.pipeline_depth (memory.chunk_axis: auto keeps the " +
          std::string(axis_name(req.chunk_axis)) + " slabs of " + req.chunk_axis_kept_from +
          "; --restart starts over with the axis that fits)";
  else if (req.chunk_axis_auto && req.chunk_axis == Axis::id)
    fix =
        "raise the budget or lower memory.pipeline_depth (memory.chunk_axis: auto found that one date does not "
        "fit either)";
  throw config_error(std::string("memory.") + side.which + " = " + format_bytes(side.budget) +
                     " is too small: one minimal slab needs " + format_bytes(side.needed) + " (" + side.detail + "); " +
                     fix);
}

}  // namespace

std::string minimal_slab_shortfall(const PlanRequest& req) {
  for (const BudgetSide& side : budget_sides(req, sizing(req)))
    if (side.budget < side.needed)
      return "one " + std::string(axis_name(req.chunk_axis)) + " needs " + side.detail + " = " +
             format_bytes(side.needed) + ", over memory." + side.which + " " + format_bytes(side.budget);
  return {};
}

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
  const Sizing sizes = sizing(req);
  const std::uint64_t unit_data = sizes.unit_data, unit_mult = sizes.unit_mult, unit = sizes.unit;
  const std::uint64_t resident = sizes.resident;

  plan.host_buffers = host_buffer_count(req);
  plan.device_buffers = device_buffer_count(req);

  std::int64_t count = extent;
  for (const BudgetSide& side : budget_sides(req, sizes)) {
    if (side.budget < side.needed) too_small(req, side);
    if (side.buffers == 0) continue;  // memory.staging: none on a GPU: no device slabs
    count = std::min(count, static_cast<std::int64_t>((side.budget - resident - side.fixed) /
                                                      (static_cast<std::uint64_t>(side.buffers) * unit)));
  }
  const std::int64_t cap = std::max<std::int64_t>(1, static_cast<std::int64_t>(req.max_slab / unit_data));
  count = std::max<std::int64_t>(1, std::min({count, cap, extent}));
  if (req.align > 1 && count > req.align && count < extent) count = count / req.align * req.align;
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
  plan.host_bytes = req.staging_bytes + req.read_bytes + req.piece_bytes + resident + plan.host_buffers * per_buffer;
  const std::uint64_t device_pieces = req.unstaged ? kDevicePiecesPerThread * req.piece_bytes : 0;
  plan.device_bytes = req.device_copies ? resident + plan.device_buffers * per_buffer + device_pieces : 0;
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
  if (!r.chunk_axis_reason.empty()) out << "               (" << r.chunk_axis_reason << ")\n";
  out << "slab           " << format_bytes(slab_bytes) << " of discount";
  if (mult_per_slab) out << " + " << format_bytes(slab_mult_bytes) << " of multBy";
  out << "\n";
  out << "multBy         " << format_bytes(mult_bytes) << (mult_per_slab ? " (streamed with the slabs)" : " (resident)")
      << "\n";
  out << "host buffers   " << host_buffers << " x " << format_bytes(slab_bytes + slab_mult_bytes)
      << (r.unstaged ? " (no ring: only a slab across a part's edge)" : "") << ", host total "
      << format_bytes(host_bytes);
  if (r.staging_bytes || r.read_bytes || r.piece_bytes) {
    std::string sep;
    out << " (incl. ";
    if (r.staging_bytes) out << format_bytes(r.staging_bytes) << " O_DIRECT staging", sep = ", ";
    if (r.piece_bytes) out << sep << format_bytes(r.piece_bytes) << " piece buffers, one per I/O thread", sep = ", ";
    if (r.read_bytes) out << sep << format_bytes(r.read_bytes) << " HDF5 reading: chunk caches, conversion buffers";
    out << ")";
  }
  out << " of budget " << format_bytes(r.host_budget) << "\n";
  if (r.device_copies && r.unstaged)
    out << "device buffers " << kDevicePiecesPerThread << " pieces per I/O thread (memory.staging: none), device total "
        << format_bytes(device_bytes) << " of budget " << format_bytes(r.device_budget) << "\n";
  else if (r.device_copies)
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
  t.input_bytes = plan.request.input_bytes;
  t.mult_input_bytes = plan.request.mult_input_bytes;
  t.output_bytes = plan.request.output_bytes;
  return t;
}

std::vector<StagePrediction> predict(const Plan& plan, const Limits& limits, const std::vector<int>& slabs) {
  std::vector<StagePrediction> stages;
  for (Stage stage : pipeline_stages(plan.request.device_copies)) {
    StagePrediction p;
    p.stage = stage_name(stage);
    p.bytes = resident_stage_bytes(stage, plan.mult_read_bytes(), plan.mult_per_slab);
    for (int index : slabs)
      p.bytes += stage_bytes(stage, traffic(plan, plan.slabs.at(static_cast<std::size_t>(index))));
    const LinkLimit& link = limits.of(stage);
    if (link.known()) {
      p.gb_per_s = link.gb_per_s;
      p.source = link.source_text();
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

namespace {

// memory.staging: none: each I/O thread takes a slab's pieces through the
// read, the multiply and the write one after another while the other threads
// do the same, so at the links' rates the stages' times add up. With a GPU the
// copies and the kernel run beside the threads' reads and writes; the slower
// side sets the pace.
void predict_unstaged(const Plan& plan, const std::vector<std::pair<Stage, double>>& per_slab, double n,
                      WallPrediction& w) {
  const bool copies = plan.request.device_copies;
  double threads = 0, gpu = 0;
  std::string gpu_pace;
  for (const auto& [stage, seconds] : per_slab) {
    const bool on_gpu = copies && (stage == Stage::h2d || stage == Stage::kernel || stage == Stage::d2h);
    if (!on_gpu)
      threads += seconds;
    else if (seconds > gpu) {
      gpu = seconds;
      gpu_pace = stage_name(stage);
    }
  }
  w.pace = gpu > threads ? gpu_pace : copies ? kUnstagedDevicePace : kUnstagedPace;
  w.first_slab_seconds = w.period_seconds = std::max(threads, gpu);
  w.seconds = w.fixed_seconds + w.resident_seconds + n * w.period_seconds;
}

}  // namespace

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
  double all = 0, device_path = 0, slowest = 0, fused_kernel = 0;
  const bool fused = plan.request.kernel_on_read;
  std::vector<std::pair<Stage, double>> per_slab;
  for (const auto& s : stages) {
    Stage stage = Stage::read;
    stage_named(s.stage, stage);
    const std::uint64_t resident = resident_stage_bytes(stage, plan.mult_read_bytes(), plan.mult_per_slab);
    const double resident_seconds = s.bytes ? s.seconds * static_cast<double>(resident) / s.bytes : 0.0;
    w.resident_seconds += resident_seconds;
    const double seconds = (s.seconds - resident_seconds) / n;
    per_slab.emplace_back(stage, seconds);
    all += seconds;
    if (stage == Stage::h2d || stage == Stage::kernel || stage == Stage::d2h) device_path += seconds;
    if (fused && stage == Stage::kernel) fused_kernel = seconds;
  }
  if (plan.request.unstaged) {
    predict_unstaged(plan, per_slab, n, w);
    return w;
  }
  // Under kernel: fused the reader's threads multiply each piece they read:
  // a slab's kernel time adds to its read's on those threads.
  for (const auto& [stage, seconds] : per_slab) {
    if (fused && stage == Stage::kernel) continue;
    const double busy = stage == Stage::read ? seconds + fused_kernel : seconds;
    if (busy > slowest) {
      slowest = busy;
      w.pace = fused && stage == Stage::read ? kFusedPace : stage_name(stage);
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
  if (plan.request.unstaged) {  // no fill and drain: every slab is the threads' turn of all stages
    std::snprintf(line, sizeof line,
                  "               %.3f s %d slab(s) at %.3f s each (memory.staging: none; %s sets the pace)\n",
                  wall.slabs * wall.period_seconds, wall.slabs, wall.period_seconds, wall.pace.c_str());
    out << line;
    return out.str();
  }
  std::snprintf(line, sizeof line, "               %.3f s the first slab through every stage (fill and drain)\n",
                wall.first_slab_seconds);
  out << line;
  if (wall.slabs > 1) {
    const bool overlap = plan.request.pipeline_depth > 1;
    std::snprintf(line, sizeof line, "               %.3f s %d more slab(s) at %.3f s each (%s)\n",
                  (wall.slabs - 1) * wall.period_seconds, wall.slabs - 1, wall.period_seconds,
                  !overlap                 ? "pipeline_depth 1: one stage after another"
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
  std::vector<Side> sides{{"memory.host_budget", "host memory available (MemAvailable, cgroup limit and ulimit -v)",
                           plan.request.host_budget, plan.host_bytes, machine.host_available}};
  if (plan.request.device_copies)
    sides.push_back({"memory.device_budget", "free device memory", plan.request.device_budget, plan.device_bytes,
                     machine.device_free});
  std::string warning;
  for (const Side& side : sides) {
    if (side.available == 0) continue;  // unknown
    if (side.needed > side.available)
      throw config_error(std::string(side.key) + " = " + format_bytes(side.budget) + ": the plan needs " +
                         format_bytes(side.needed) + " but only " + format_bytes(side.available) + " of " + side.what +
                         " is there; lower it (a percentage such as 80% follows the machine)");
    if (side.budget > side.available && warning.empty())
      warning = std::string(side.key) + " = " + format_bytes(side.budget) + " is more than the " +
                format_bytes(side.available) + " of " + side.what + "; this job needs only " +
                format_bytes(side.needed) + ", so it runs";
  }
  return warning;
}

}  // namespace discount
