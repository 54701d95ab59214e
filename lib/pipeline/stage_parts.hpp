// The small pieces both ways of running share (pipeline/staged_pipeline.hpp,
// pipeline/piece_streamer.hpp): the clock, the memory spaces a run stages in,
// the ticket a slab carries from stage to stage, pinned staging blocks, the
// union of busy intervals and the non-finite value message. Included by the
// pipeline only.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "backend/gpu_runtime.hpp"
#include "backend/host_pages.hpp"
#include "backend/spaces.hpp"
#include "common/quote.hpp"
#include "io/input/input.hpp"
#include "pipeline/input_sums.hpp"
#include "pipeline/pipeline.hpp"
#include "plan/plan.hpp"

namespace discount::pipeline_detail {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class Space>
constexpr bool host_accessible() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
}

// The memory a run over ExecSpace computes and stages in.
template <class ExecSpace>
struct PipelineSpaces {
  using ComputeMemory = typename ExecSpace::memory_space;
  static constexpr bool copies = !host_accessible<ExecSpace>();
  using StagingSpace = std::conditional_t<copies, PinnedHostSpace, Kokkos::HostSpace>;
  // Staging buffers are views of memory the pipeline owns: pinned
  // allocations for a GPU, else HostPages (backend/host_pages.hpp says why).
  using HostBuffer = Kokkos::View<double*, StagingSpace, Kokkos::MemoryUnmanaged>;
  // Pinned memory is taken through the memory space itself, not a managed
  // View: the stager thread allocates it while the pipeline runs.
  static constexpr bool kLazyStaging = !std::is_same_v<StagingSpace, Kokkos::HostSpace>;
  using DeviceBuffer = Kokkos::View<double*, ComputeMemory>;
};

using Interval = std::pair<Clock::time_point, Clock::time_point>;

// Seconds covered by at least one of the intervals (which may overlap).
inline double union_seconds(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0.0;
  Clock::time_point covered{};  // the end of what has been counted so far
  for (const auto& [begin, end] : intervals) {
    const auto from = std::max(begin, covered);
    if (end > from) total += std::chrono::duration<double>(end - from).count();
    covered = std::max(covered, end);
  }
  return total;
}

// The first n elements of src into dst, asynchronously on exec.
template <class ExecSpace, class Dst, class Src>
void copy_prefix(const ExecSpace& exec, const Dst& dst, const Src& src, std::size_t n) {
  Kokkos::deep_copy(exec, Kokkos::subview(dst, std::make_pair(std::size_t{0}, n)),
                    Kokkos::subview(src, std::make_pair(std::size_t{0}, n)));
}

struct Ticket {
  int slab = -1;
  int host = -1;
  int device = -1;
  InputSums sums;              // of the input bytes read for the slab, when the sink records them
  double fused_seconds = 0.0;  // compute.kernel: fused: the multiply's share of the read
};

// `key` is the YAML key that names the dataset (input.multiplier or
// input.discount), as the user writes it; `dataset` the name it gives.
[[noreturn]] inline void nonfinite_error(const char* key, const std::string& dataset, double value,
                                         const std::string& where) {
  throw data_error(std::string(key) + ": dataset " + quote_for_message(dataset) + ": " +
                   (value != value ? "NaN"
                    : value > 0    ? "+Inf"
                                   : "-Inf") +
                   " at [" + where + "] (input.nonfinite: error; set it to propagate to let NaN/Inf through)");
}

// Names the element at `index` of a packed slab buffer by its axes.
inline std::string slab_coordinates(std::int64_t index, const std::array<Axis, 3>& axes,
                                    const std::array<std::int64_t, 3>& extent,
                                    const std::array<std::int64_t, 3>& origin) {
  const std::int64_t coord[3] = {index / (extent[1] * extent[2]), index / extent[2] % extent[1], index % extent[2]};
  std::string where;
  for (int j = 0; j < 3; ++j)
    where += std::string(j ? ", " : "") + axis_name(axes[j]) + " " + std::to_string(origin[j] + coord[j]);
  return where;
}

// `bytes` of page-locked host memory, freed on destruction. Ordinary pages,
// mapped and touched here, then registered with the GPU runtime. While the
// runtime's own pinned allocation (Space().allocate) made a split job's ring
// ready, it held back the GPU stages' copies and launches (on the H200 node
// H2D 28 GB/s and the kernel stage 0.45 s busy for 20 GB); registered pages
// did not (49 GB/s, 0.03 s), though the ring took about as long to make
// ready (0.67 against 0.57 s for 1.2 GB). Where registering is refused, the
// runtime allocates. `runtime_alloc` (DISCOUNT_STAGING_PIN=alloc, Knobs)
// takes the runtime's allocation always (benchmarks compare the two).
template <class Space>
class PinnedBlock {
 public:
  PinnedBlock(std::size_t bytes, bool runtime_alloc) : bytes_(bytes) {
    if (!runtime_alloc) {
      HostPages pages(bytes);
      touch_pages(pages.data(), bytes);
      if (gpu::register_host(pages.data(), bytes)) {
        pages_ = std::move(pages);
        data_ = pages_.data();
        return;
      }
    }
    data_ = Space().allocate(bytes);
  }
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  ~PinnedBlock() {
    if (pages_.data())
      gpu::unregister_host(pages_.data());  // pages_ unmaps them
    else
      Space().deallocate(data_, bytes_);
  }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  HostPages pages_;  // registered pages, or none when the runtime allocated
  void* data_ = nullptr;
};

}  // namespace discount::pipeline_detail
