// multBy where it stays resident (date slabs: every slab uses all of it):
// read once before the slabs, scanned, summed for the input checksums, and
// uploaded for a GPU. Slabs along id bring their own rows instead (the
// staging ring's, pipeline/staging_ring.hpp), and this stays empty.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "backend/region.hpp"
#include "common/startup.hpp"
#include "pipeline/input_sums.hpp"
#include "pipeline/nonfinite_scan.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stage_figures.hpp"
#include "pipeline/stage_parts.hpp"
#include "pipeline/staging_memory.hpp"

namespace discount::pipeline_detail {

template <class ExecSpace>
class ResidentMultiplier {
  using Spaces = PipelineSpaces<ExecSpace>;

 public:
  using HostBuffer = typename Spaces::HostBuffer;
  using DeviceBuffer = typename Spaces::DeviceBuffer;

  ResidentMultiplier(const PipelineSpec& spec, const Plan& plan) : spec_(spec), plan_(plan) {}
  ResidentMultiplier(const ResidentMultiplier&) = delete;
  ResidentMultiplier& operator=(const ResidentMultiplier&) = delete;

  // The buffer, then (the run's buffers all made) the rows read, on the read
  // stage's figures, summed where the sink records input checksums, and
  // copied to the GPU.
  void load(const PipelineJob& job, const NonfiniteScan& scan, StageFigures& figures,
            StagingMemory<ExecSpace>& memory) {
    const std::size_t n = plan_.mult_bytes / sizeof(double);
    if (!plan_.mult_per_slab) {
      host_ = memory.buffer(n);
      startup::mark("multBy buffer");
    }
    startup::mark("buffers (staging ring: made ready while streaming)");
    if (plan_.mult_per_slab) return;
    startup::first_read();
    const auto t0 = Clock::now();
    {
      const Region region("discount::read");
      scan.read_multiplier(*job.input, spec_.ids, host_.data());
    }
    figures.stats(Stage::read).bytes += resident_stage_bytes(Stage::read, plan_.mult_read_bytes(), plan_.mult_per_slab);
    figures.stats(Stage::read).seconds += seconds_since(t0);
    figures.busy_since(t0);
    if (job.sink->wants_input_sums()) {
      const Region sums("discount::input_sums");
      whole_sum_ = multiplier_sum(host_.data(), spec_.ids, plan_.request.nums);
    }
    if (Spaces::copies) {
      const Region upload("discount::h2d");
      device_ = DeviceBuffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_multBy"), n);
      Kokkos::deep_copy(device_, host_);
    }
  }

  const double* host() const { return host_.data(); }
  const DeviceBuffer& device() const { return device_; }

  // The checksum of the rows a date slab uses (pipeline/input_sums.hpp), `ids`
  // absolute: the whole of multBy's, summed once, or those of a part.
  std::uint64_t slab_sum(const Slab& slab, Range ids) const {
    const std::int64_t nums = plan_.request.nums;
    if (ids.begin == spec_.ids.begin && ids.end == spec_.ids.end) return whole_sum_;
    const Region region("discount::input_sums");
    return multiplier_sum(host_.data() + slab.ids.begin * nums, ids, nums);
  }

 private:
  const PipelineSpec& spec_;
  const Plan& plan_;
  HostBuffer host_;
  DeviceBuffer device_;
  std::uint64_t whole_sum_ = 0;  // of host_, taken once it is read
};

}  // namespace discount::pipeline_detail
