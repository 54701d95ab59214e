// The staging ring (pipeline/staged_pipeline.hpp): host buffers a slab is
// read into and written from (and its multBy rows, where each slab brings
// its own), the device buffers it is copied to for a GPU, and the queues
// of free ones.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/host_pages.hpp"
#include "backend/region.hpp"
#include "pipeline/queue.hpp"
#include "pipeline/stage_parts.hpp"
#include "pipeline/staging_memory.hpp"
#include "plan/plan.hpp"

namespace discount::pipeline_detail {

template <class ExecSpace>
class StagingRing {
  using Spaces = PipelineSpaces<ExecSpace>;

 public:
  using HostBuffer = typename Spaces::HostBuffer;
  using DeviceBuffer = typename Spaces::DeviceBuffer;

  // The device buffers now, all free; the host ones as make_ready() makes them.
  StagingRing(const Plan& plan, StagingMemory<ExecSpace>& memory) : plan_(plan), memory_(memory) {
    host_slab_.resize(static_cast<std::size_t>(plan_.host_buffers));
    if (plan_.mult_per_slab) host_mult_.resize(static_cast<std::size_t>(plan_.host_buffers));
    const std::size_t slab_elems = plan_.slab_bytes / sizeof(double);
    const std::size_t mult_elems = plan_.slab_mult_bytes / sizeof(double);
    for (int s = 0; s < plan_.device_buffers; ++s) {
      device_slab_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_slab"), slab_elems);
      if (plan_.mult_per_slab)
        device_mult_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_mult"), mult_elems);
    }
  }
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Pinning host memory (stage_parts.hpp's PinnedBlock) takes time, and so
  // does the first touch of fresh pages (0.1-0.2 GB/s on the development VM,
  // whose hypervisor hands out memory page by page), so a ring of several GB
  // made ready up front held the first read back by seconds. Here each
  // buffer is pinned, or its pages touched, in turn on the staging thread
  // and handed to the reader as soon as it is ready, while the first slabs
  // are already read and moved: no stage's figure pays for it, and the
  // report books it on its own line. Only this thread takes staging memory
  // until the run ends; host_slab_ is sized up front and entry s is written
  // before s is queued (the queue orders the two).
  void make_ready() {
    for (int s = 0; s < plan_.host_buffers; ++s) {
      const auto t0 = Clock::now();
      const Region region("discount::staging");
      make_staging(s);
      if constexpr (!Spaces::kLazyStaging) {
        touch_pages(host_slab_[static_cast<std::size_t>(s)].data(), plan_.slab_bytes);
        if (plan_.mult_per_slab) touch_pages(host_mult_[static_cast<std::size_t>(s)].data(), plan_.slab_mult_bytes);
      }
      bytes_ += plan_.slab_bytes + plan_.slab_mult_bytes;
      seconds_ += seconds_since(t0);
      free_host_.push(s);
    }
  }
  // The device buffers, all free (before the stages start).
  void free_device_buffers() {
    for (int s = 0; s < plan_.device_buffers; ++s) free_device_.push(s);
  }
  // A failed stage stops the others waiting for a buffer.
  void close() {
    free_host_.close();
    free_device_.close();
  }

  BlockingQueue<int>& free_host() { return free_host_; }
  BlockingQueue<int>& free_device() { return free_device_; }
  const HostBuffer& host_slab(int s) const { return host_slab_[static_cast<std::size_t>(s)]; }
  const HostBuffer& host_mult(int s) const { return host_mult_[static_cast<std::size_t>(s)]; }
  const DeviceBuffer& device_slab(int s) const { return device_slab_[static_cast<std::size_t>(s)]; }
  const DeviceBuffer& device_mult(int s) const { return device_mult_[static_cast<std::size_t>(s)]; }

  // The report's staging figures, after the threads joined.
  std::uint64_t bytes() const { return bytes_; }
  double seconds() const { return seconds_; }

 private:
  // Staging buffer s (and its multBy rows when each slab brings its own).
  void make_staging(int s) {
    host_slab_[static_cast<std::size_t>(s)] = memory_.staging_buffer(plan_.slab_bytes / sizeof(double));
    if (plan_.mult_per_slab)
      host_mult_[static_cast<std::size_t>(s)] = memory_.staging_buffer(plan_.slab_mult_bytes / sizeof(double));
  }

  const Plan& plan_;
  StagingMemory<ExecSpace>& memory_;
  std::vector<HostBuffer> host_slab_, host_mult_;
  std::vector<DeviceBuffer> device_slab_, device_mult_;
  BlockingQueue<int> free_host_, free_device_;
  std::uint64_t bytes_ = 0;  // made ready by make_ready()
  double seconds_ = 0.0;
};

}  // namespace discount::pipeline_detail
