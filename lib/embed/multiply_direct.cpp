#include "embed/multiply_direct.hpp"

#include <Kokkos_Core.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "backend/region.hpp"
#include "kernels/apply.hpp"
#include "pipeline/pipeline.hpp"
#include "common/test_hooks.hpp"
#include "plan/stages.hpp"

namespace discount::embed {

namespace {

using Clock = std::chrono::steady_clock;

// Bytes of disc per direct slab, at least (the whole array when smaller),
// unless the caller's budgets cut slabs: each slab costs a fork-join of the
// host threads and a re-read of the multBy rows it covers (about 1.5 ms and
// 16 MB per slab on the 2-core VM, where 7 slabs of 48 MB took 44 ms
// against 30 ms for one), and 4 GiB keeps a stop within ~0.1 s.
constexpr std::uint64_t kDirectSlabBytes = std::uint64_t{4} << 30;

bool plain_f64(const ArrayRef& a) { return a.type == ElementType::f64 && a.c_contiguous(); }

// out must be disc itself (in place, elementwise) or share no byte with it:
// a partial overlap would read values the kernel has already overwritten.
bool apart_or_same(const ArrayRef& disc, const ArrayRef& out) {
  if (disc.data == out.data) return true;
  const auto d = reinterpret_cast<std::uintptr_t>(disc.data);
  const auto o = reinterpret_cast<std::uintptr_t>(out.data);
  const auto bytes = static_cast<std::uintptr_t>(disc.elements()) * sizeof(double);
  return o + bytes <= d || d + bytes <= o;
}

// Asks the kernel to start reading [data, data + bytes) now: an np.memmap's
// next slab comes from disk while this one is computed, in large reads,
// instead of page fault by page fault from several threads at once (which
// defeats the kernel's read-ahead). Memory already resident returns at once.
void read_ahead(const void* data, std::size_t bytes) {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(data) + bytes;
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);  // advice only: its result does not matter
}

}  // namespace

bool direct_applies(const MultiplyRequest& request, const Plan& plan) {
  const bool chunk_fits = !request.chunk_axis || *request.chunk_axis == request.axes[0];
  return !request.device_arrays && !plan.request.device_copies && plain_f64(request.mult) && plain_f64(request.disc) &&
         plain_f64(request.out) && apart_or_same(request.disc, request.out) && chunk_fits && !plan.slabs.empty() &&
         request.axes[0] != Axis::num;  // slabs cut dates or ids
}

std::vector<Slab> direct_slabs(const MultiplyRequest& request, const Plan& plan) {
  const Axis outer = request.axes[0];
  std::int64_t dates = 0;
  for (std::size_t j = 0; j < 3; ++j)
    if (request.axes[j] == Axis::date) dates = request.disc.shape[j];
  const std::int64_t n = request.disc.shape[0];
  // No staging buffers to fit, so a budget only caps: a slab's disc and out
  // (the pages it touches, an np.memmap's included) hold at most host_budget,
  // and at most kDirectSlabBytes of disc either way. A budget larger than the
  // arrays changes nothing.
  const auto unit = std::max<std::uint64_t>(
      static_cast<std::uint64_t>(request.disc.shape[1] * request.disc.shape[2]) * sizeof(double), 1);
  std::uint64_t slab_bytes = kDirectSlabBytes;
  if (request.host_budget) slab_bytes = std::min(slab_bytes, plan.request.host_budget / 2);
  std::int64_t per = static_cast<std::int64_t>(std::max<std::uint64_t>(slab_bytes / unit, 1));
  per = std::clamp<std::int64_t>(per, 1, std::max<std::int64_t>(n, 1));
  std::vector<Slab> slabs;
  for (std::int64_t b = 0; b < n; b += per) {
    const Range part{b, std::min(n, b + per)};
    Slab slab;
    slab.index = static_cast<int>(slabs.size());
    slab.dates = outer == Axis::date ? part : Range{0, dates};
    slab.ids = outer == Axis::id ? part : Range{0, request.mult.shape[0]};
    slab.nums = request.mult.shape[1];
    slabs.push_back(slab);
  }
  return slabs;
}

void multiply_direct(const MultiplyRequest& request, const JobSpec& spec, const Plan& plan, RunReport& report,
                     const std::atomic<int>* stop, const Progress& progress) {
  using Memory = Kokkos::HostSpace;
  const Kokkos::DefaultHostExecutionSpace exec;
  const auto& shape = request.disc.shape;
  const std::int64_t inner = shape[1] * shape[2];  // elements per index of the outermost axis
  const auto* mult = static_cast<const double*>(request.mult.data);
  const auto* disc = static_cast<const double*>(request.disc.data);
  auto* out = static_cast<double*>(request.out.data);
  const TestHold test_hold(spec.pipeline.knobs.test_hold);
  const auto stopping = [stop] { return stop && stop->load() != 0; };

  StageStats kernel;
  kernel.name = stage_name(Stage::kernel);
  const auto start = Clock::now();
  std::uint64_t written_bytes = 0;
  const std::vector<Slab> slabs = direct_slabs(request, plan);
  report.slabs_total = static_cast<int>(slabs.size());
  const auto first_of = [&](const Slab& slab) {
    return (request.axes[0] == Axis::date ? slab.dates.begin : slab.ids.begin) * inner;
  };
  const auto read_ahead_slab = [&](std::size_t s) {
    if (slabs.size() > 1 && s < slabs.size())
      read_ahead(disc + first_of(slabs[s]), static_cast<std::size_t>(slabs[s].elements()) * sizeof(double));
  };
  read_ahead_slab(0);
  for (std::size_t s = 0; s < slabs.size(); ++s) {
    const Slab& slab = slabs[s];
    if (stopping()) break;
    read_ahead_slab(s + 1);  // the next slab's disc on its way while this one runs
    const Geometry g = geometry(request.axes, slab);
    // The kernel indexes multBy from the slab's first id.
    const std::int64_t mult_offset = slab.ids.begin * slab.nums;
    const std::int64_t offset = first_of(slab);
    const auto t0 = Clock::now();
    {
      const Region region("discount::kernel");
      const ConstFlatView<Memory> mult_view(mult + mult_offset, static_cast<std::size_t>(slab.ids.size() * slab.nums));
      const ConstSlabView<Memory> in(disc + offset, g.extent[0], g.extent[1], g.extent[2]);
      const SlabView<Memory> result(out + offset, g.extent[0], g.extent[1], g.extent[2]);
      apply_mdrange(exec, spec.pipeline.slicing, mult_view, in, result, g.mult_stride);
      exec.fence();
    }
    SlabTraffic moved;
    moved.elements = static_cast<std::uint64_t>(slab.elements());
    moved.mult_elements = static_cast<std::uint64_t>(slab.ids.size() * slab.nums);
    kernel.bytes += stage_bytes(Stage::kernel, moved);
    kernel.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    ++kernel.slabs;
    written_bytes += stage_bytes(Stage::write, moved);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (progress) progress(progress_fields("", kernel.slabs, report.slabs_total, written_bytes, seconds));
    test_hold.after_slab(kernel.slabs, stopping);  // tests only (common/test_hooks.hpp)
  }
  report.stages = {kernel};
  report.slabs_run = kernel.slabs;
  report.any_stage_seconds = kernel.seconds;
  report.interrupted = kernel.slabs < report.slabs_total;
}

}  // namespace discount::embed
