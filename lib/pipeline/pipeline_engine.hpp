// class Pipeline<ExecSpace>: the streaming pipeline's state (the staging
// ring, device buffers, queues between the stages, per-stage counters) and
// the small members every stage uses (guarded, record, the staging thread).
// Its constructor and run() are in pipeline/pipeline.cpp, the stage threads
// (reader, uploader, compute, downloader, writers) in
// pipeline/stage_threads.hpp. Included by pipeline.cpp only.
#pragma once

#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/affinity.hpp"
#include "common/error.hpp"
#include "backend/host_pages.hpp"
#include "common/quote.hpp"
#include "backend/region.hpp"
#include "common/startup.hpp"
#include "io/input/finite.hpp"
#include "io/records/checksum.hpp"
#include "kernels/apply.hpp"
#include "kernels/features.hpp"
#include "kernels/piece_multiply.hpp"
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
#include "kernels/blas.hpp"
#endif
#include "backend/spaces.hpp"
#include "pipeline/input_sums.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/queue.hpp"
#include "pipeline/stage_parts.hpp"
#include "pipeline/staging_pool.hpp"
#include "common/test_hooks.hpp"

namespace discount::pipeline_detail {

struct SlabPiecesAt;  // pipeline/unstaged.hpp
struct SharedSlabs;   // pipeline/unstaged.hpp

template <class ExecSpace>
class Pipeline {
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

 public:
  Pipeline(const PipelineJob& job, RunReport& report);  // reads a resident multBy (pipeline.cpp)
  // The staging blocks go back to the process's pool, which keeps them when
  // keeping is on. A failed run's are freed: copies may still be in flight.
  ~Pipeline() {
    if (aborted_) return;
    staging_pool<PinnedBlock<StagingSpace>>().give_back(pinned_);
    staging_pool<HostPages>().give_back(host_pages_);
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  void run();  // the stage threads, then the report's figures

 private:
  // A buffer of `elements` doubles: a block the previous run kept
  // (pipeline/staging_pool.hpp), else a new one. `reused` counts the kept bytes.
  HostBuffer host_buffer(std::size_t elements, std::uint64_t* reused = nullptr) {
    void* data = nullptr;
    if constexpr (kLazyStaging)
      data = kept_or_new(pinned_, elements * sizeof(double), reused, spec_.knobs.staging_pin_alloc);
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

  // Staging buffer s (and its multBy rows when each slab brings its own).
  void make_staging(int s) {
    host_slab_[static_cast<std::size_t>(s)] = host_buffer(plan_.slab_bytes / sizeof(double), &staging_reused_bytes_);
    if (plan_.mult_per_slab)
      host_mult_[static_cast<std::size_t>(s)] =
          host_buffer(plan_.slab_mult_bytes / sizeof(double), &staging_reused_bytes_);
  }

  // Pinning host memory (stage_parts.hpp's PinnedBlock) takes time, and so
  // does the first touch of fresh pages (0.1-0.2 GB/s on the development VM,
  // whose hypervisor hands out memory page by page), so a ring of several GB
  // made ready up front held the first read back by seconds. Here each
  // buffer is pinned, or its pages touched, in turn on this thread and handed
  // to the reader as soon as it is ready, while the first slabs are already
  // read and moved: no stage's figure pays for it, and the report books it
  // on its own line. Only this thread touches pinned_ and host_pages_ until
  // the pipeline ends; host_slab_ is sized up front and entry s is written
  // before s is queued (the queue orders the two).
  void stage_buffers() {
    for (int s = 0; s < plan_.host_buffers; ++s) {
      const auto t0 = Clock::now();
      const Region region("discount::staging");
      make_staging(s);
      if constexpr (!kLazyStaging) {
        touch_pages(host_slab_[static_cast<std::size_t>(s)].data(), plan_.slab_bytes);
        if (plan_.mult_per_slab) touch_pages(host_mult_[static_cast<std::size_t>(s)].data(), plan_.slab_mult_bytes);
      }
      staging_bytes_ += plan_.slab_bytes + plan_.slab_mult_bytes;
      staging_seconds_ += seconds_since(t0);
      free_host_.push(s);
    }
  }

  // Runs a stage; on failure records the first error and closes every queue
  // so the other stages stop; on success closes the stage's output queues.
  template <class Body>
  void guarded(Body&& body, std::initializer_list<BlockingQueue<Ticket>*> outputs) {
    // Over the CPUs the process started with (a launcher's binding, else the job's cpuset).
    if (std::this_thread::get_id() != main_thread_) use_process_affinity();
    try {
      body();
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!first_error_) first_error_ = std::current_exception();
      }
      aborted_ = true;
      for (auto* q : {&loaded_, &uploaded_, &kernel_done_, &computed_}) q->close();
      free_host_.close();
      free_device_.close();
    }
    for (auto* q : outputs) q->close();
  }

  bool stop_requested() const { return aborted_ || (job_.stop && job_.stop->load() != 0); }

  void read_multiplier(Range ids, double* buffer);
  void report_figures();                               // the stages' counters into the report, after the threads joined
  void run_unstaged(const std::vector<int>& pending);  // run()'s two ways
  void run_staged(const std::vector<int>& pending);
  void share_slabs(const std::vector<int>& pending, int sharing, SharedSlabs& shared);

  Range absolute(Range r, Range selection) const { return {selection.begin + r.begin, selection.begin + r.end}; }

  // The stage threads (pipeline/stage_threads.hpp).
  void reader(const std::vector<int>& pending);
  void read_visited(const Slab& slab, Range dates, Range ids, double* buffer, Ticket& t);
  std::uint64_t slab_mult_sum(const Slab& slab, Range ids, int host) const;
  void uploader(const ExecSpace& exec);
  void compute(const ExecSpace& exec);
  void downloader(const ExecSpace& exec);
  void writer();
  void slab_written_locked();
  void writer_done();
  // memory.staging: none: these threads instead of the stages above
  // (pipeline/unstaged.hpp); with a GPU thread w has kDeviceSlots pieces in
  // flight at most, on streams kDeviceSlots * w + s.
  static constexpr int kDeviceSlots = kDevicePiecesPerThread;
  // Elements per piece on a GPU: kCachePieceBytes, or DISCOUNT_DEVICE_PIECE_MIB
  // MiB (1 to 64, Knobs::device_piece_mib) for benchmarks that compare piece sizes.
  std::int64_t device_piece_elements() const {
    const int mib = spec_.knobs.device_piece_mib;
    const std::uint64_t bytes = mib > 0 ? static_cast<std::uint64_t>(mib) << 20 : kCachePieceBytes;
    return static_cast<std::int64_t>(bytes / sizeof(double));
  }
  // Elements per piece when every piece goes in place (arrays pinned where
  // they lie, no host staging): 8 MiB, where `threads` threads' pieces of
  // that size fit the device budget (1 MiB otherwise), or
  // DISCOUNT_DEVICE_PIECE_MIB. On the H200 node 50 x 10M x 5 took 0.468 s in
  // 8 MiB pieces against 0.616 s in 1 MiB ones (1.15 and 1.56x what PCIe
  // allows, same calls).
  std::int64_t in_place_piece_elements(int threads) const {
    if (spec_.knobs.device_piece_mib > 0) return device_piece_elements();
    const std::uint64_t larger = std::uint64_t{8} << 20;
    const std::uint64_t extra =
        static_cast<std::uint64_t>(kDeviceSlots) * static_cast<std::uint64_t>(threads) * (larger - kCachePieceBytes);
    if (plan_.device_bytes + extra > plan_.request.device_budget) return device_piece_elements();
    return static_cast<std::int64_t>(larger / sizeof(double));
  }
  struct PieceSeconds {
    double read = 0.0, kernel = 0.0, write = 0.0;
    double travel = 0.0;  // with a GPU: the pieces' time from queued to back
  };
  void streamer(const std::vector<int>& pending, std::atomic<std::size_t>& next, int w,
                const ExecInstances<ExecSpace>& instances);
  // A sink that takes any piece from any thread (OutputSink::piece_threads):
  // the threads share out the pieces of every slab instead.
  void piece_sharer(SharedSlabs& shared, int w, const ExecInstances<ExecSpace>& instances);
  void shared_slab_written(SharedSlabs& shared, std::size_t j);
  struct PieceInFlight {  // a shared piece sent to the GPU on one of a thread's streams
    std::size_t slab = 0;
    std::int64_t first = 0, count = 0;
    bool busy = false;
    Clock::time_point sent{};
    bool landed_in_place = false;  // the GPU wrote it into the output
  };
  void sharer_write(SharedSlabs& shared, std::size_t j, std::int64_t first, std::int64_t count, double* values,
                    PieceSeconds& seconds);
  void add_sharer_seconds(const PieceSeconds& seconds, Clock::time_point t0);
  void queue_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, const double* from, double* to,
                   int stream, const ExecInstances<ExecSpace>& instances);
  void send_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, double* values, double* to,
                  int stream, const ExecInstances<ExecSpace>& instances, std::uint64_t* disc_sum,
                  PieceSeconds& seconds);
  SlabPiecesAt pieces_at(const Slab& slab) const;  // a slab's geometry for its pieces
  void read_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, double* values,
                  std::uint64_t* disc_sum);
  void pieces_through_device(const SlabPiecesAt& at, std::int64_t total, SlabPieces& out, int w,
                             const ExecInstances<ExecSpace>& instances, std::uint64_t* disc_sum, PieceSeconds& seconds);

  // One slab's work on a stage, timed from t0, counted by plan/stages.hpp.
  // The interval is kept too: the stages overlap, so the time in no stage is
  // the wall time less their union.
  // `other_seconds` of the interval belong to another stage (the fused
  // kernel's share of a read) and are left out of this stage's figure.
  void record(Stage stage, const Slab& slab, Clock::time_point t0, double other_seconds = 0.0) {
    const auto t1 = Clock::now();
    record_seconds(stage, slab, std::max(0.0, std::chrono::duration<double>(t1 - t0).count() - other_seconds));
    std::lock_guard<std::mutex> lock(busy_mutex_);
    busy_intervals_.emplace_back(t0, t1);
  }
  // A slab's figures without an interval of its own (the fused kernel, whose
  // time lies inside the read's interval).
  void record_seconds(Stage stage, const Slab& slab, double seconds) {
    StageStats& s = stats(stage);
    s.bytes += stage_bytes(stage, traffic(plan_, slab));
    s.seconds += seconds;
    ++s.slabs;
  }
  // Each stage's counters are written by its own thread only, read after join.
  StageStats& stats(Stage stage) { return stats_[static_cast<std::size_t>(stage)]; }

  const PipelineJob& job_;
  const PipelineSpec& spec_;
  const Plan& plan_;
  RunReport& report_;
  std::array<Axis, 3> axes_{};
  bool blas_ = false, scan_ = false;
  bool fused_ = false;           // compute.kernel: fused: the reader's threads multiply (host memory only)
  bool unstaged_ = false;        // memory.staging: none: streamer threads, no ring
  std::mutex whole_slab_mutex_;  // unstaged: one slab at a time in a whole-slab buffer
  // unstaged with a GPU: kDeviceSlots pinned and device pieces per thread
  double* pinned_pieces_ = nullptr;  // kDeviceSlots pieces per thread, thread w's from w * kDeviceSlots pieces
  std::vector<DeviceBuffer> device_pieces_;
  int total_pending_ = 0;

  std::vector<std::unique_ptr<HostPages>> host_pages_;  // own the memory of the host buffers below
  std::uint64_t staging_bytes_ = 0;                     // the staging ring, made ready by stage_buffers()
  std::uint64_t staging_reused_bytes_ = 0;  // blocks an earlier run kept: of the ring, or a GPU's pinned pieces
  double staging_seconds_ = 0.0;
  std::vector<std::unique_ptr<PinnedBlock<StagingSpace>>> pinned_;  // or these (pinned)
  std::vector<HostBuffer> host_slab_, host_mult_;
  std::vector<DeviceBuffer> device_slab_, device_mult_;
  HostBuffer resident_mult_host_;
  std::uint64_t whole_mult_sum_ = 0;  // of resident_mult_host_, taken once it is read
  DeviceBuffer resident_mult_device_;

  BlockingQueue<int> free_host_, free_device_;
  BlockingQueue<Ticket> loaded_, uploaded_, kernel_done_, computed_;
  const std::thread::id main_thread_ = std::this_thread::get_id();
  int writers_ = 1, writers_done_ = 0;  // writer threads, and those that have finished (under write_mutex_)
  std::mutex write_mutex_;              // the write stage's counts, progress figures and test hold
  std::vector<std::pair<Clock::time_point, Clock::time_point>> write_intervals_;  // under write_mutex_
  const Clock::time_point write_start_ = Clock::now();
  const TestHold test_hold_{spec_.knobs.test_hold};     // DISCOUNT_TEST_HOLD: the e2e tests' pause points
  Clock::time_point first_upload_{}, last_download_{};  // each written by one thread, read after join
  std::atomic<bool> aborted_{false};
  std::mutex error_mutex_;
  std::mutex busy_mutex_;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> busy_intervals_;  // every stage's timed work
  std::exception_ptr first_error_;
  std::array<StageStats, kStageCount> stats_ = [] {
    std::array<StageStats, kStageCount> named{};
    for (Stage stage : kAllStages) named[static_cast<std::size_t>(stage)].name = stage_name(stage);
    return named;
  }();
};

}  // namespace discount::pipeline_detail
