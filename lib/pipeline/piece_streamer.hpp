// memory.staging: none (docs/config.md): no staging ring. Each I/O thread
// takes whole slabs and moves each in pieces of about 1 MiB through buffers
// of its own that stay in cache (pipeline/unstaged.hpp); or, for a sink that
// takes any piece from any thread (arrays in memory), the threads share out
// the pieces of every slab (pipeline/shared_pieces.hpp). In host memory a
// thread multiplies each piece itself; with a GPU it sends the piece there
// and back on a stream of its own. Included by pipeline.cpp only.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/region.hpp"
#include "backend/spaces.hpp"
#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_context.hpp"
#include "pipeline/resident_multiplier.hpp"
#include "pipeline/stage_parts.hpp"
#include "pipeline/staging_memory.hpp"

namespace discount::pipeline_detail {

struct SlabPiecesAt;  // pipeline/unstaged.hpp
struct SharedSlabs;   // pipeline/shared_pieces.hpp

template <class ExecSpace>
class PieceStreamer : PipelineContext {
  using Spaces = PipelineSpaces<ExecSpace>;
  static constexpr bool copies = Spaces::copies;
  using HostBuffer = typename Spaces::HostBuffer;
  using DeviceBuffer = typename Spaces::DeviceBuffer;

 public:
  // The resident multBy, read (and uploaded) before the threads start.
  PieceStreamer(const PipelineJob& job, RunReport& report)
      : PipelineContext(job, report), memory_(spec_.knobs.staging_pin_alloc), multiplier_(spec_, plan_) {
    if ((!copies && spec_.kernel != KernelKind::fused) || plan_.mult_per_slab || !job.input->reads_ranges())
      throw internal_error("memory.staging: none needs the fused multiply (host), date slabs and positional reads");
    multiplier_.load(job_, scan_, state_.figures(), memory_);
  }
  // The pinned blocks go back to the process's pool, which keeps them when
  // keeping is on. A failed run's are freed: copies may still be in flight.
  ~PieceStreamer() {
    if (!state_.aborted()) memory_.give_back();
  }

  // The I/O threads, then the report's figures.
  void run() {
    const std::vector<int> pending = pending_slabs();
    const Region region("discount::pipeline");
    const int sharing = job_.sink->piece_threads();
    if (sharing > 0)
      run_shared(pending, sharing);
    else
      run_whole(pending);
    report_figures(copies, {0, memory_.reused_bytes(), 0.0, {}, {}});
  }

 private:
  // With a GPU thread w has kDeviceSlots pieces in flight at most, on
  // streams kDeviceSlots * w + s.
  static constexpr int kDeviceSlots = kDevicePiecesPerThread;

  // One thread per file the sink can take at once, each moving whole slabs.
  void run_whole(const std::vector<int>& pending) {
    state_.set_writers(std::max(1, job_.sink->writer_threads()));
    ExecInstances<ExecSpace> instances(copies ? kDeviceSlots * state_.writers() : 0);
    if constexpr (copies) make_pieces(device_piece_elements(), true);
    std::atomic<std::size_t> next{0};
    on_threads([&](int w) { streamer(pending, next, w, instances); });
  }
  // The sink's thread count (no more than there are pieces), sharing out
  // the pieces of every slab (pipeline/shared_pieces.hpp).
  void run_shared(const std::vector<int>& pending, int sharing);

  // Every thread's device pieces, and their pinned pieces (`with_pinned`:
  // unless every piece goes in place) in one block, which a later run in
  // this process may take again (pipeline/staging_pool.hpp).
  void make_pieces(std::int64_t piece_elements, bool with_pinned) {
    const auto piece = static_cast<std::size_t>(piece_elements);
    if (with_pinned)
      pinned_pieces_ = memory_.staging_buffer(static_cast<std::size_t>(state_.writers()) * kDeviceSlots * piece).data();
    for (int s = 0; s < kDeviceSlots * state_.writers(); ++s)
      device_pieces_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_piece"), piece);
  }

  // `work(w)` on each of the writer threads, w = 0, 1, ...; a failure's
  // first error thrown here once they all joined.
  template <class Work>
  void on_threads(Work&& work) {
    std::vector<std::thread> threads;
    for (int w = 0; w < state_.writers(); ++w)
      threads.emplace_back([&, w] { state_.guarded([&] { work(w); }, [] {}); });
    for (auto& t : threads) t.join();
    state_.rethrow_first_error();
  }

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

  // Whole slabs, each thread its own (pipeline/unstaged.hpp).
  void streamer(const std::vector<int>& pending, std::atomic<std::size_t>& next, int w,
                const ExecInstances<ExecSpace>& instances);
  void stream_slab(const Slab& slab, int w, const ExecInstances<ExecSpace>& instances, std::vector<double>& piece);
  void pieces_on_host(const SlabPiecesAt& at, std::int64_t total, SlabPieces* out, double* piece, double* slab_buffer,
                      std::uint64_t* disc_sum, PieceSeconds& seconds);
  void pieces_through_device(const SlabPiecesAt& at, std::int64_t total, SlabPieces& out, int w,
                             const ExecInstances<ExecSpace>& instances, std::uint64_t* disc_sum, PieceSeconds& seconds);
  void book_slab(const Slab& slab, const PieceSeconds& seconds, Clock::time_point t0);
  // A piece's moves (pipeline/unstaged.hpp).
  SlabPiecesAt pieces_at(const Slab& slab) const;  // a slab's geometry for its pieces
  void read_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, double* values,
                  std::uint64_t* disc_sum);
  void send_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, double* values, double* to,
                  int stream, const ExecInstances<ExecSpace>& instances, std::uint64_t* disc_sum,
                  PieceSeconds& seconds);
  void queue_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, const double* from, double* to,
                   int stream, const ExecInstances<ExecSpace>& instances);

  // A sink that takes any piece from any thread (OutputSink::piece_threads):
  // the threads share out the pieces of every slab (pipeline/shared_pieces.hpp).
  void share_slabs(const std::vector<int>& pending, int sharing, SharedSlabs& shared);
  void piece_sharer(SharedSlabs& shared, int w, const ExecInstances<ExecSpace>& instances);
  void share_on_host(SharedSlabs& shared, PieceSeconds& seconds);
  void share_through_device(SharedSlabs& shared, int w, const ExecInstances<ExecSpace>& instances,
                            PieceSeconds& seconds);
  struct PieceInFlight {  // a shared piece sent to the GPU on one of a thread's streams
    std::size_t slab = 0;
    std::int64_t first = 0, count = 0;
    bool busy = false;
    Clock::time_point sent{};
    bool landed_in_place = false;  // the GPU wrote it into the output
  };
  void shared_slab_written(SharedSlabs& shared, std::size_t j);
  void sharer_write(SharedSlabs& shared, std::size_t j, std::int64_t first, std::int64_t count, double* values,
                    PieceSeconds& seconds);
  void add_sharer_seconds(const PieceSeconds& seconds, Clock::time_point t0);

  StagingMemory<ExecSpace> memory_;  // first: freed after every buffer in it or on the GPU
  ResidentMultiplier<ExecSpace> multiplier_;
  std::mutex whole_slab_mutex_;  // one slab at a time in a whole-slab buffer
  // With a GPU: kDeviceSlots pinned and device pieces per thread
  double* pinned_pieces_ = nullptr;  // thread w's from w * kDeviceSlots pieces
  std::vector<DeviceBuffer> device_pieces_;
};

}  // namespace discount::pipeline_detail
