// The host memory a run stages in: blocks an earlier run in this process
// kept (pipeline/staging_pool.hpp), else new ones, pinned for a GPU
// (stage_parts.hpp's PinnedBlock) or plain pages (backend/host_pages.hpp).
// The run hands them back to the process's pool when it ends well
// (give_back); a failed run's are freed with this object, after every
// device buffer and stream of the run: copies may still be in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "backend/host_pages.hpp"
#include "pipeline/stage_parts.hpp"
#include "pipeline/staging_pool.hpp"

namespace discount::pipeline_detail {

template <class ExecSpace>
class StagingMemory {
  using Spaces = PipelineSpaces<ExecSpace>;
  using StagingSpace = typename Spaces::StagingSpace;

 public:
  using HostBuffer = typename Spaces::HostBuffer;

  // `runtime_pin_alloc`: DISCOUNT_STAGING_PIN=alloc (Knobs), PinnedBlock's choice.
  explicit StagingMemory(bool runtime_pin_alloc) : runtime_pin_alloc_(runtime_pin_alloc) {}
  StagingMemory(const StagingMemory&) = delete;
  StagingMemory& operator=(const StagingMemory&) = delete;

  // A buffer of `elements` doubles: a block the previous run kept, else a new one.
  HostBuffer buffer(std::size_t elements) { return host_buffer(elements, nullptr); }
  // The same, its kept bytes counted in reused_bytes() (the staging ring, a
  // GPU's pinned pieces: the report's staging_reused_bytes).
  HostBuffer staging_buffer(std::size_t elements) { return host_buffer(elements, &reused_bytes_); }
  std::uint64_t reused_bytes() const { return reused_bytes_; }

  // The blocks to the process's pool, which keeps them when keeping is on.
  void give_back() {
    staging_pool<PinnedBlock<StagingSpace>>().give_back(pinned_);
    staging_pool<HostPages>().give_back(host_pages_);
  }

 private:
  HostBuffer host_buffer(std::size_t elements, std::uint64_t* reused) {
    void* data = nullptr;
    if constexpr (Spaces::kLazyStaging)
      data = kept_or_new(pinned_, elements * sizeof(double), reused, runtime_pin_alloc_);
    else
      data = kept_or_new(host_pages_, elements * sizeof(double), reused);
    return HostBuffer(static_cast<double*>(data), elements);
  }
  template <class Block, class... Args>
  static void* kept_or_new(std::vector<std::unique_ptr<Block>>& owned, std::size_t bytes, std::uint64_t* reused,
                           const Args&... args) {
    std::unique_ptr<Block> block = staging_pool<Block>().take(bytes);
    if (block && reused) *reused += bytes;
    if (!block) block = std::make_unique<Block>(bytes, args...);
    owned.push_back(std::move(block));
    return owned.back()->data();
  }

  const bool runtime_pin_alloc_;
  std::vector<std::unique_ptr<HostPages>> host_pages_;              // own the memory of the host buffers
  std::vector<std::unique_ptr<PinnedBlock<StagingSpace>>> pinned_;  // or these (pinned)
  std::uint64_t reused_bytes_ = 0;  // blocks an earlier run kept: of the ring, or a GPU's pinned pieces
};

}  // namespace discount::pipeline_detail
