// The staging ring (memory.staging: ring, docs/config.md): a reader thread
// fills a ring of host staging buffers; with a GPU an uploader, the compute
// stage and a downloader move each slab there and back, each on an
// execution space instance of its own; writers take the slabs out. With the
// kernel in host space there are no copies and the kernel works in place
// on the staging buffer. The stage threads are in pipeline/stage_threads.hpp.
// Included by pipeline.cpp only.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <initializer_list>
#include <memory>
#include <thread>
#include <vector>

#include "backend/region.hpp"
#include "backend/spaces.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_context.hpp"
#include "pipeline/queue.hpp"
#include "pipeline/resident_multiplier.hpp"
#include "pipeline/slab_kernel.hpp"
#include "pipeline/stage_parts.hpp"
#include "pipeline/staging_memory.hpp"
#include "pipeline/staging_ring.hpp"

namespace discount::pipeline_detail {

// The queues a slab's ticket travels through from stage to stage.
struct StageQueues {
  BlockingQueue<Ticket> loaded, uploaded, kernel_done, computed;
  void close() {
    for (auto* q : {&loaded, &uploaded, &kernel_done, &computed}) q->close();
  }
};

template <class ExecSpace>
class StagedPipeline : PipelineContext {
  static constexpr bool copies = PipelineSpaces<ExecSpace>::copies;

 public:
  // The ring's device buffers and the resident multBy, read (and uploaded)
  // before the stages start; the host buffers are made while they run.
  StagedPipeline(const PipelineJob& job, RunReport& report)
      : PipelineContext(job, report),
        memory_(spec_.knobs.staging_pin_alloc),
        multiplier_(spec_, plan_),
        ring_(plan_, memory_),
        kernel_(make_slab_kernel<ExecSpace>(spec_, axes_)) {
    multiplier_.load(job_, scan_, state_.figures(), memory_);
  }
  // The staging blocks go back to the process's pool, which keeps them when
  // keeping is on. A failed run's are freed: copies may still be in flight.
  ~StagedPipeline() {
    if (!state_.aborted()) memory_.give_back();
  }

  // The stage threads, then the report's figures.
  void run() {
    const std::vector<int> pending = pending_slabs();
    ring_.free_device_buffers();
    const Region region("discount::pipeline");  // this thread's: the compute stage's regions nest in it
    run_stages(pending);
    report_figures(copies, {ring_.bytes(), memory_.reused_bytes(), ring_.seconds(), first_upload_, last_download_});
  }

 private:
  // A reader, with a GPU an uploader and a downloader, the compute stage on
  // this thread, one writer per file the sink can take at once (a split
  // output's parts).
  void run_stages(const std::vector<int>& pending) {
    ExecInstances<ExecSpace> instances(copies ? 3 : 1);
    std::vector<std::thread> threads;
    threads.emplace_back([&] { guarded([&] { ring_.make_ready(); }, {}); });
    threads.emplace_back([&] { guarded([&] { reader(pending); }, {&queues_.loaded}); });
    if (copies) {
      threads.emplace_back([&] { guarded([&] { uploader(instances.get(1)); }, {&queues_.uploaded}); });
      threads.emplace_back([&] { guarded([&] { downloader(instances.get(2)); }, {&queues_.computed}); });
    }
    state_.set_writers(std::max(1, job_.sink->writer_threads()));
    for (int w = 0; w < state_.writers(); ++w) threads.emplace_back([&] { guarded([&] { writer(); }, {}); });
    guarded([&] { compute(instances.get(0)); }, {copies ? &queues_.kernel_done : &queues_.computed});
    for (auto& t : threads) t.join();
    state_.rethrow_first_error();
    // Several writers (split output): the write stage's time is the time any
    // of them was writing, not the sum over writers.
    if (state_.writers() > 1) state_.stats(Stage::write).seconds = union_seconds(write_intervals_);
  }

  // Runs a stage; on failure records the first error and closes every queue
  // so the other stages stop; either way closes the stage's output queues.
  template <class Body>
  void guarded(Body&& body, std::initializer_list<BlockingQueue<Ticket>*> outputs) {
    state_.guarded(body, [this] {
      queues_.close();
      ring_.close();
    });
    for (auto* q : outputs) q->close();
  }

  // The stage threads (pipeline/stage_threads.hpp).
  void reader(const std::vector<int>& pending);
  void read_visited(const Slab& slab, Range dates, Range ids, double* buffer, Ticket& t);
  std::uint64_t slab_mult_sum(const Slab& slab, Range ids, int host) const;
  void uploader(const ExecSpace& exec);
  void compute(const ExecSpace& exec);
  void downloader(const ExecSpace& exec);
  void writer();

  StagingMemory<ExecSpace> memory_;  // first: freed after every buffer in it or on the GPU
  ResidentMultiplier<ExecSpace> multiplier_;
  StagingRing<ExecSpace> ring_;
  const std::unique_ptr<const SlabKernel<ExecSpace>> kernel_;  // compute.kernel, chosen once
  StageQueues queues_;
  std::vector<Interval> write_intervals_;               // under the write lock
  Clock::time_point first_upload_{}, last_download_{};  // each written by one thread, read after join
};

}  // namespace discount::pipeline_detail
