// The streaming pipeline's entry (pipeline/pipeline.hpp): Pipeline's
// constructor (buffers, the resident multBy) and run() (the stage threads
// started and joined, the report's figures), and run_pipeline, which picks
// the execution space. The class is in pipeline/pipeline_engine.hpp, the
// stage threads in pipeline/stage_threads.hpp.
#include "pipeline/pipeline.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "common/startup.hpp"
#include "pipeline/unstaged.hpp"

namespace discount {

namespace pipeline_detail {

template <class ExecSpace>
Pipeline<ExecSpace>::Pipeline(const PipelineJob& job, RunReport& report)
    : job_(job), spec_(*job.spec), plan_(*job.plan), report_(report) {
  axes_ = job.input->axes();
  require_kernel_compiled_in(spec_.kernel);
  blas_ = spec_.kernel == KernelKind::blas;
  // resolve() takes fused only where the compute runs in host memory (and
  // refuses it otherwise); the reader multiplies the staging buffer either way.
  fused_ = spec_.kernel == KernelKind::fused;
  unstaged_ = spec_.staging == Staging::none;
  if (unstaged_ && ((!copies && !fused_) || plan_.mult_per_slab || !job.input->reads_ranges()))
    throw internal_error("memory.staging: none needs the fused multiply (host), date slabs and positional reads");
  scan_ = spec_.check_finite && job.input->may_hold_nonfinite();
  host_slab_.resize(static_cast<std::size_t>(plan_.host_buffers));
  if (plan_.mult_per_slab) host_mult_.resize(static_cast<std::size_t>(plan_.host_buffers));
  const std::size_t slab_elems = plan_.slab_bytes / sizeof(double);
  const std::size_t mult_elems = plan_.slab_mult_bytes / sizeof(double);
  for (int s = 0; s < plan_.device_buffers; ++s) {
    device_slab_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_slab"), slab_elems);
    if (plan_.mult_per_slab)
      device_mult_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_mult"), mult_elems);
  }
  const std::size_t n = plan_.mult_bytes / sizeof(double);
  if (!plan_.mult_per_slab) {
    resident_mult_host_ = host_buffer(n);
    startup::mark("multBy buffer");
  }
  startup::mark("buffers (staging ring: made ready while streaming)");
  if (!plan_.mult_per_slab) {
    startup::first_read();
    const auto t0 = Clock::now();
    {
      const Region region("discount::read");
      read_multiplier(spec_.ids, resident_mult_host_.data());
    }
    stats(Stage::read).bytes += resident_stage_bytes(Stage::read, plan_.mult_read_bytes(), plan_.mult_per_slab);
    stats(Stage::read).seconds += seconds_since(t0);
    busy_intervals_.emplace_back(t0, Clock::now());
    if (job_.sink->wants_input_sums()) {
      const Region sums("discount::input_sums");
      whole_mult_sum_ = multiplier_sum(resident_mult_host_.data(), spec_.ids, plan_.request.nums);
    }
    if (copies) {
      const Region upload("discount::h2d");
      resident_mult_device_ =
          DeviceBuffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_multBy"), n);
      Kokkos::deep_copy(resident_mult_device_, resident_mult_host_);
    }
  }
}

template <class ExecSpace>
void Pipeline<ExecSpace>::run() {
  std::vector<int> pending;
  for (const auto& slab : plan_.slabs)
    if (!job_.sink->slab_done(slab)) pending.push_back(slab.index);
  report_.slabs_total = static_cast<int>(plan_.slabs.size());
  report_.slabs_skipped = report_.slabs_total - static_cast<int>(pending.size());
  pending = job_.sink->write_order(rank_share(pending, spec_.rank, spec_.ranks));
  for (int s = 0; s < plan_.device_buffers; ++s) free_device_.push(s);
  total_pending_ = static_cast<int>(pending.size());
  const Region region("discount::pipeline");  // this thread's: the compute stage's regions nest in it
  if (unstaged_)
    run_unstaged(pending);
  else
    run_staged(pending);
  report_figures();
}

// One thread per file the sink can take at once, each moving whole slabs;
// or, for a sink that takes any piece from any thread, its thread count
// (no more than there are pieces), sharing out the pieces of every slab.
template <class ExecSpace>
void Pipeline<ExecSpace>::run_unstaged(const std::vector<int>& pending) {
  const int sharing = job_.sink->piece_threads();
  SharedSlabs shared;
  if (sharing > 0) {
    share_slabs(pending, sharing, shared);
    writers_ = static_cast<int>(std::clamp<std::int64_t>(shared.first_piece.back(), 1, sharing));
  } else {
    writers_ = std::max(1, job_.sink->writer_threads());
  }
  ExecInstances<ExecSpace> instances(copies ? kDeviceSlots * writers_ : 0);
  if constexpr (copies) {
    // Every thread's pinned pieces in one block, which a later run in this
    // process may take again (pipeline/staging_pool.hpp).
    const auto piece = static_cast<std::size_t>(sharing > 0 ? shared.piece : device_piece_elements());
    if (!shared.in_place)
      pinned_pieces_ =
          host_buffer(static_cast<std::size_t>(writers_) * kDeviceSlots * piece, &staging_reused_bytes_).data();
    for (int s = 0; s < kDeviceSlots * writers_; ++s)
      device_pieces_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_piece"), piece);
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers_; ++w)
    threads.emplace_back([&, w] {
      guarded(
          [&] {
            if (sharing > 0)
              piece_sharer(shared, w, instances);
            else
              streamer(pending, next, w, instances);
          },
          {});
    });
  for (auto& t : threads) t.join();
  if (first_error_) std::rethrow_exception(first_error_);
}

// The pending slabs' pieces, numbered across slabs, for `sharing` threads.
template <class ExecSpace>
void Pipeline<ExecSpace>::share_slabs(const std::vector<int>& pending, int sharing, SharedSlabs& shared) {
  shared.pending = pending;
  // Arrays pinned in place for every slab, both ways: nothing is staged
  // on the host, and the GPU copies larger pieces straight from and into
  // them (in_place_piece_elements; piece_sharer).
  shared.in_place = copies && !pending.empty();
  for (int index : pending) {
    const Slab& slab = plan_.slabs[static_cast<std::size_t>(index)];
    const SlabPiecesAt at = pieces_at(slab);
    shared.at.push_back(at);
    shared.out.push_back(job_.sink->slab_pieces(slab));
    if (!shared.out.back()) throw internal_error("a sink that shares pieces took a slab only whole");
    shared.in_place = shared.in_place && job_.input->discount_in_place(at.dates, at.ids, 0, at.g.elements()) &&
                      shared.out.back()->in_place(0, at.g.elements());
  }
  shared.piece = !copies           ? static_cast<std::int64_t>(kCachePieceBytes / sizeof(double))
                 : shared.in_place ? in_place_piece_elements(sharing)
                                   : device_piece_elements();
  shared.first_piece.push_back(0);
  for (const SlabPiecesAt& at : shared.at)
    shared.first_piece.push_back(shared.first_piece.back() + (at.g.elements() + shared.piece - 1) / shared.piece);
  shared.left = std::make_unique<std::atomic<std::int64_t>[]>(pending.size());
  for (std::size_t j = 0; j < pending.size(); ++j) shared.left[j] = shared.first_piece[j + 1] - shared.first_piece[j];
}

// The staging ring: a reader, with a GPU an uploader and a downloader, the
// compute stage on this thread, one writer per file the sink can take at
// once (a split output's parts).
template <class ExecSpace>
void Pipeline<ExecSpace>::run_staged(const std::vector<int>& pending) {
  ExecInstances<ExecSpace> instances(copies ? 3 : 1);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { guarded([&] { stage_buffers(); }, {}); });
  threads.emplace_back([&] { guarded([&] { reader(pending); }, {&loaded_}); });
  if (copies) {
    threads.emplace_back([&] { guarded([&] { uploader(instances.get(1)); }, {&uploaded_}); });
    threads.emplace_back([&] { guarded([&] { downloader(instances.get(2)); }, {&computed_}); });
  }
  writers_ = std::max(1, job_.sink->writer_threads());
  for (int w = 0; w < writers_; ++w) threads.emplace_back([&] { guarded([&] { writer(); }, {}); });
  guarded([&] { compute(instances.get(0)); }, {copies ? &kernel_done_ : &computed_});
  for (auto& t : threads) t.join();
  if (first_error_) std::rethrow_exception(first_error_);
  // Several writers (split output): the write stage's time is the time any
  // of them was writing, not the sum over writers.
  if (writers_ > 1) stats(Stage::write).seconds = union_seconds(write_intervals_);
}

template <class ExecSpace>
void Pipeline<ExecSpace>::report_figures() {
  report_.stages.clear();
  for (Stage stage : pipeline_stages(copies)) report_.stages.push_back(stats(stage));
  report_.slabs_run = stats(Stage::write).slabs;
  report_.input_bytes = stats(Stage::read).bytes;
  report_.output_bytes = stats(Stage::write).bytes;
  report_.interrupted = stats(Stage::write).slabs < total_pending_;
  if (copies && stats(Stage::d2h).slabs > 0)
    report_.device_path_seconds = std::chrono::duration<double>(last_download_ - first_upload_).count();
  report_.any_stage_seconds = union_seconds(busy_intervals_);
  report_.staging_bytes = staging_bytes_;
  report_.staging_reused_bytes = staging_reused_bytes_;
  report_.staging_seconds = staging_seconds_;
}

}  // namespace pipeline_detail

std::vector<int> rank_share(const std::vector<int>& pending, int rank, int ranks) {
  const auto n = static_cast<std::int64_t>(pending.size());
  const auto begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  return {pending.begin() + begin, pending.begin() + end};
}

bool needs_device_copies(Space space) {
  return space == Space::device && !pipeline_detail::host_accessible<Kokkos::DefaultExecutionSpace>();
}

std::string execution_space_name(Space space) {
  return space == Space::device ? Kokkos::DefaultExecutionSpace::name() : Kokkos::DefaultHostExecutionSpace::name();
}

void run_pipeline(const PipelineJob& job, RunReport& report) {
  if (job.spec->space == Space::device) {
    pipeline_detail::Pipeline<Kokkos::DefaultExecutionSpace> pipeline(job, report);
    pipeline.run();
  } else {
    pipeline_detail::Pipeline<Kokkos::DefaultHostExecutionSpace> pipeline(job, report);
    pipeline.run();
  }
}

namespace {
using KeptPinned = pipeline_detail::PinnedBlock<PinnedHostSpace>;
}  // namespace

void keep_staging(bool keep) {
  pipeline_detail::staging_pool<KeptPinned>().set_keep(keep);
  pipeline_detail::staging_pool<HostPages>().set_keep(keep);
}

void release_kept_staging() {
  pipeline_detail::staging_pool<KeptPinned>().clear();
  pipeline_detail::staging_pool<HostPages>().clear();
}

std::uint64_t kept_staging_bytes() {
  return pipeline_detail::staging_pool<KeptPinned>().kept_bytes() +
         pipeline_detail::staging_pool<HostPages>().kept_bytes();
}

}  // namespace discount
