// compute.kernel as the staging ring runs it (pipeline/staged_pipeline.hpp),
// chosen once per run by make_slab_kernel: a kernel the compute stage
// launches on each slab (mdrange, or blas with Kokkos Kernels), or the
// fused multiply, which the reader's threads do on each piece as it lands
// and whose time the compute stage only books.
#pragma once

#include <Kokkos_Core.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "backend/region.hpp"
#include "common/axis.hpp"
#include "kernels/apply.hpp"
#include "kernels/piece_multiply.hpp"
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
#include "kernels/blas.hpp"
#endif
#include "pipeline/pipeline.hpp"
#include "pipeline/stage_figures.hpp"
#include "pipeline/stage_parts.hpp"
#include "resolve/resolve.hpp"

namespace discount::pipeline_detail {

// The fused multiply's time over one slab's pieces, which the reader's
// threads multiply side by side.
struct LandedMultiply {
  std::atomic<std::int64_t> ns{0};
  std::atomic<int> now{0}, most_at_once{1};  // threads in multiply_piece: now, and the most seen
  // The multiply's thread-seconds over the most threads seen in it at
  // once: its share of the read's wall time, booked on the kernel stage,
  // not the read.
  double seconds() const { return static_cast<double>(ns.load()) * 1e-9 / most_at_once.load(); }
};

template <class ExecSpace>
class SlabKernel {
 public:
  using ComputeMemory = typename ExecSpace::memory_space;
  SlabKernel() = default;
  SlabKernel(const SlabKernel&) = delete;
  SlabKernel& operator=(const SlabKernel&) = delete;
  virtual ~SlabKernel() = default;

  // Whether the reader hands each piece to multiply_landed as it lands.
  virtual bool multiplies_as_read() const { return false; }
  // Elements [first, first + count) of a slab, at `piece`, multiplied where
  // they landed, on the reader's thread.
  virtual void multiply_landed(double* /*piece*/, const double* /*mult*/, const PieceShape& /*shape*/,
                               std::int64_t /*first*/, std::int64_t /*count*/, LandedMultiply& /*timing*/) const {}
  // The compute stage's part of a slab whose values and multBy rows lie at
  // `data` and `mult` (in ComputeMemory), on its figures.
  virtual void compute(const ExecSpace& exec, const Slab& slab, const Ticket& t, double* data, const double* mult,
                       StageFigures& figures) const = 0;
};

// compute.kernel: fused (host memory only: resolve() refuses it otherwise).
template <class ExecSpace>
class FusedKernel final : public SlabKernel<ExecSpace> {
 public:
  bool multiplies_as_read() const override { return true; }
  void multiply_landed(double* piece, const double* mult, const PieceShape& shape, std::int64_t first,
                       std::int64_t count, LandedMultiply& timing) const override {
    const auto m0 = Clock::now();
    const int now = timing.now.fetch_add(1) + 1;
    for (int seen = timing.most_at_once.load(); now > seen && !timing.most_at_once.compare_exchange_weak(seen, now);) {}
    {
      const Region kernel("discount::kernel");
      multiply_piece(piece, mult, shape, first, count);
    }
    timing.now.fetch_sub(1);
    timing.ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - m0).count(),
                        std::memory_order_relaxed);
  }
  // Multiplied as it was read (the reader): its share of the read, booked.
  void compute(const ExecSpace&, const Slab& slab, const Ticket& t, double*, const double*,
               StageFigures& figures) const override {
    figures.record_seconds(Stage::kernel, slab, t.fused_seconds);
  }
};

// A kernel launched on each slab on the compute stage's instance, timed
// until it is done.
template <class ExecSpace>
class LaunchedKernel : public SlabKernel<ExecSpace> {
 public:
  using ComputeMemory = typename ExecSpace::memory_space;
  explicit LaunchedKernel(const std::array<Axis, 3>& axes) : axes_(axes) {}
  void compute(const ExecSpace& exec, const Slab& slab, const Ticket&, double* data, const double* mult,
               StageFigures& figures) const override {
    const auto t0 = Clock::now();
    const Region region("discount::kernel");
    const Geometry g = geometry(axes_, slab);
    const ConstFlatView<ComputeMemory> mult_view(mult, static_cast<std::size_t>(slab.ids.size() * slab.nums));
    const SlabView<ComputeMemory> slab_view(data, g.extent[0], g.extent[1], g.extent[2]);
    apply(exec, mult_view, slab_view, g);
    exec.fence();
    check_device_errors("discount::apply");
    figures.record(Stage::kernel, slab, t0);
  }

 protected:
  virtual void apply(const ExecSpace& exec, const ConstFlatView<ComputeMemory>& mult,
                     const SlabView<ComputeMemory>& slab, const Geometry& g) const = 0;

 private:
  const std::array<Axis, 3> axes_;
};

// compute.kernel: mdrange (and auto's choice of it).
template <class ExecSpace>
class MdRangeKernel final : public LaunchedKernel<ExecSpace> {
  using ComputeMemory = typename ExecSpace::memory_space;

 public:
  MdRangeKernel(const std::array<Axis, 3>& axes, const Slicing& slicing)
      : LaunchedKernel<ExecSpace>(axes), slicing_(slicing) {}

 protected:
  void apply(const ExecSpace& exec, const ConstFlatView<ComputeMemory>& mult, const SlabView<ComputeMemory>& slab,
             const Geometry& g) const override {
    apply_mdrange(exec, slicing_, mult, ConstSlabView<ComputeMemory>(slab), slab, g.mult_stride);
  }

 private:
  const Slicing slicing_;
};

#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
// compute.kernel: blas (Kokkos Kernels).
template <class ExecSpace>
class BlasKernel final : public LaunchedKernel<ExecSpace> {
  using ComputeMemory = typename ExecSpace::memory_space;

 public:
  using LaunchedKernel<ExecSpace>::LaunchedKernel;

 protected:
  void apply(const ExecSpace& exec, const ConstFlatView<ComputeMemory>& mult, const SlabView<ComputeMemory>& slab,
             const Geometry&) const override {
    apply_blas(exec, mult, ConstSlabView<ComputeMemory>(slab), slab);
  }
};
#endif

// The run's kernel, from compute.kernel as resolve() left it (a kernel not
// compiled in was refused before: kernels/features.hpp).
template <class ExecSpace>
std::unique_ptr<SlabKernel<ExecSpace>> make_slab_kernel(const PipelineSpec& spec, const std::array<Axis, 3>& axes) {
  if (spec.kernel == KernelKind::fused) return std::make_unique<FusedKernel<ExecSpace>>();
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
  if (spec.kernel == KernelKind::blas) return std::make_unique<BlasKernel<ExecSpace>>(axes);
#endif
  return std::make_unique<MdRangeKernel<ExecSpace>>(axes, spec.slicing);
}

}  // namespace discount::pipeline_detail
