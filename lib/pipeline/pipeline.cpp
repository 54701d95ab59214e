#include "pipeline/pipeline.hpp"

#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>

#include "common/affinity.hpp"
#include "common/error.hpp"
#include "common/host_pages.hpp"
#include "io/finite.hpp"
#include "kernels/apply.hpp"
#include "kernels/features.hpp"
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
#include "kernels/blas.hpp"
#endif
#include "pipeline/exec_instances.hpp"
#include "pipeline/queue.hpp"

namespace discount {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class Space>
constexpr bool host_accessible() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
}

// Slab geometry in the buffer's memory order (the file's axis order).
struct Geometry {
  std::array<std::int64_t, 3> extent;
  std::array<std::int64_t, 3> mult_stride;
  std::int64_t elements() const { return extent[0] * extent[1] * extent[2]; }
};

Geometry geometry(const std::array<Axis, 3>& axes, const Slab& slab) {
  Geometry g{};
  g.extent = discount_box({slab.dates.end, slab.ids.end, slab.nums}, axes, slab.dates, slab.ids).count;
  for (int j = 0; j < 3; ++j) g.mult_stride[j] = axes[j] == Axis::date ? 0 : axes[j] == Axis::id ? slab.nums : 1;
  return g;
}

// One slab's work on a stage, timed from t0.
void record(StageStats& stage, std::uint64_t bytes, Clock::time_point t0) {
  stage.bytes += bytes;
  stage.seconds += seconds_since(t0);
  ++stage.slabs;
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
};

[[noreturn]] void nonfinite_error(const std::string& dataset, double value, const std::string& where) {
  throw data_error("input." + dataset + ": " + (value != value ? "NaN" : value > 0 ? "+Inf" : "-Inf") + " at [" +
                   where + "] (input.nonfinite: error; set it to propagate to let NaN/Inf through)");
}

// Names the element at `index` of a packed slab buffer by its axes.
std::string slab_coordinates(std::int64_t index, const std::array<Axis, 3>& axes,
                             const std::array<std::int64_t, 3>& extent, const std::array<std::int64_t, 3>& origin) {
  const std::int64_t coord[3] = {index / (extent[1] * extent[2]), index / extent[2] % extent[1], index % extent[2]};
  std::string where;
  for (int j = 0; j < 3; ++j)
    where += std::string(j ? ", " : "") + axis_name(axes[j]) + " " + std::to_string(origin[j] + coord[j]);
  return where;
}

template <class ExecSpace>
class Pipeline {
  using ComputeMemory = typename ExecSpace::memory_space;
  static constexpr bool copies = !host_accessible<ExecSpace>();
#ifdef KOKKOS_ENABLE_CUDA
  using StagingSpace = std::conditional_t<copies, Kokkos::CudaHostPinnedSpace, Kokkos::HostSpace>;
#else
  using StagingSpace = Kokkos::HostSpace;
#endif
  // Staging buffers are views of memory the pipeline owns: pinned Kokkos
  // allocations for a GPU, else HostPages (common/host_pages.hpp says why).
  using HostBuffer = Kokkos::View<double*, StagingSpace, Kokkos::MemoryUnmanaged>;
  using PinnedBuffer = Kokkos::View<double*, StagingSpace>;
  using DeviceBuffer = Kokkos::View<double*, ComputeMemory>;

 public:
  Pipeline(const PipelineJob& job, RunReport& report) : job_(job), plan_(*job.plan), report_(report) {
    const auto& cfg = *job.config;
    axes_ = job.input->axes();
    slicing_ = make_slicing(axes_, cfg.compute.parallel_dims, cfg.compute.tile);
    require_compiled_parts(cfg);
    blas_ = cfg.compute.kernel == KernelKind::blas;
    scan_ = cfg.input.nonfinite == NonFinite::error && job.input->may_hold_nonfinite();
    const std::size_t slab_elems = plan_.slab_bytes / sizeof(double);
    const std::size_t mult_elems = plan_.slab_mult_bytes / sizeof(double);
    for (int s = 0; s < plan_.host_buffers; ++s) {
      host_slab_.push_back(host_buffer("discount::staging_slab", slab_elems));
      if (plan_.mult_per_slab) host_mult_.push_back(host_buffer("discount::staging_mult", mult_elems));
    }
    for (int s = 0; s < plan_.device_buffers; ++s) {
      device_slab_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_slab"), slab_elems);
      if (plan_.mult_per_slab)
        device_mult_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_mult"),
                                  mult_elems);
    }
    if (!plan_.mult_per_slab) {
      const std::size_t n = plan_.mult_bytes / sizeof(double);
      resident_mult_host_ = host_buffer("discount::multBy", n);
      const auto t0 = Clock::now();
      read_multiplier(job.ids, resident_mult_host_.data());
      read_.bytes += plan_.mult_bytes;
      read_.seconds += seconds_since(t0);
      if (copies) {
        resident_mult_device_ =
            DeviceBuffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_multBy"), n);
        Kokkos::deep_copy(resident_mult_device_, resident_mult_host_);
      }
    }
  }

  void run() {
    std::vector<int> pending;
    for (const auto& slab : plan_.slabs)
      if (!job_.sink->slab_done(slab)) pending.push_back(slab.index);
    report_.slabs_total = static_cast<int>(plan_.slabs.size());
    report_.slabs_skipped = report_.slabs_total - static_cast<int>(pending.size());
    pending = rank_share(pending, job_.rank, job_.ranks);
    for (int s = 0; s < plan_.host_buffers; ++s) free_host_.push(s);
    for (int s = 0; s < plan_.device_buffers; ++s) free_device_.push(s);
    total_pending_ = static_cast<int>(pending.size());

    ExecInstances<ExecSpace> instances(copies ? 3 : 1);
    std::vector<std::thread> threads;
    threads.emplace_back([&] { guarded([&] { reader(pending); }, {&loaded_}); });
    if (copies) {
      threads.emplace_back([&] { guarded([&] { uploader(instances.get(1)); }, {&uploaded_}); });
      threads.emplace_back([&] { guarded([&] { downloader(instances.get(2)); }, {&computed_}); });
    }
    threads.emplace_back([&] { guarded([&] { writer(); }, {}); });
    guarded([&] { compute(instances.get(0)); }, {copies ? &kernel_done_ : &computed_});
    for (auto& t : threads) t.join();
    if (first_error_) std::rethrow_exception(first_error_);

    report_.stages = {read_, h2d_, kernel_, d2h_, write_};
    if (!copies) report_.stages = {read_, kernel_, write_};
    report_.slabs_run = write_.slabs;
    report_.input_bytes = read_.bytes;
    report_.output_bytes = write_.bytes;
    report_.interrupted = write_.slabs < total_pending_;
    if (copies && d2h_.slabs > 0)
      report_.device_path_seconds = std::chrono::duration<double>(last_download_ - first_upload_).count();
  }

 private:
  HostBuffer host_buffer(const char* label, std::size_t elements) {
    if constexpr (std::is_same_v<StagingSpace, Kokkos::HostSpace>) {
      host_pages_.emplace_back(elements * sizeof(double));
      return HostBuffer(static_cast<double*>(host_pages_.back().data()), elements);
    } else {
      pinned_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), elements);
      return HostBuffer(pinned_.back().data(), elements);
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

  void read_multiplier(Range ids, double* buffer) {
    job_.input->read_multiplier(ids, buffer);
    if (!scan_) return;
    const std::int64_t n = ids.size() * plan_.request.nums;
    const std::int64_t bad = find_nonfinite(buffer, n);
    if (bad >= 0)
      nonfinite_error(job_.config->input.multiplier, buffer[bad],
                      "id " + std::to_string(ids.begin + bad / plan_.request.nums) + ", num " +
                          std::to_string(bad % plan_.request.nums));
  }

  Range absolute(Range r, Range selection) const { return {selection.begin + r.begin, selection.begin + r.end}; }

  void reader(const std::vector<int>& pending) {
    for (int index : pending) {
      Ticket t;
      if (!free_host_.pop(t.host) || stop_requested()) break;
      t.slab = index;
      const Slab& slab = plan_.slabs[index];
      const auto t0 = Clock::now();
      const Range dates = absolute(slab.dates, job_.dates), ids = absolute(slab.ids, job_.ids);
      if (plan_.mult_per_slab) {
        read_multiplier(ids, host_mult_[t.host].data());
        read_.bytes += ids.size() * slab.nums * sizeof(double);
      }
      double* buffer = host_slab_[t.host].data();
      const Geometry g = geometry(axes_, slab);
      if (job_.skip_host_io && filled_[t.host]) {
        loaded_.push(t);
        continue;
      }
      filled_[t.host] = true;
      job_.input->read_discount(dates, ids, buffer);
      if (scan_) {
        const std::int64_t bad = find_nonfinite(buffer, g.elements());
        if (bad >= 0) {
          const auto origin = discount_box(job_.input->shape(), axes_, dates, ids).start;
          nonfinite_error(job_.config->input.discount, buffer[bad], slab_coordinates(bad, axes_, g.extent, origin));
        }
      }
      record(read_, g.elements() * sizeof(double), t0);
      loaded_.push(t);
    }
  }

  void uploader(const ExecSpace& exec) {
    Ticket t;
    while (loaded_.pop(t) && !aborted_) {
      if (!free_device_.pop(t.device)) break;
      const auto t0 = Clock::now();
      if (h2d_.slabs == 0) first_upload_ = t0;
      const Slab& slab = plan_.slabs[t.slab];
      const auto n = static_cast<std::size_t>(slab.elements());
      copy_prefix(exec, device_slab_[t.device], host_slab_[t.host], n);
      std::uint64_t bytes = n * sizeof(double);
      if (plan_.mult_per_slab) {
        const auto m = static_cast<std::size_t>(slab.ids.size() * slab.nums);
        copy_prefix(exec, device_mult_[t.device], host_mult_[t.host], m);
        bytes += m * sizeof(double);
      }
      exec.fence();
      record(h2d_, bytes, t0);
      uploaded_.push(t);
    }
  }

  void compute(const ExecSpace& exec) {
    auto& input = copies ? uploaded_ : loaded_;
    auto& output = copies ? kernel_done_ : computed_;
    Ticket t;
    while (input.pop(t) && !aborted_) {
      const auto t0 = Clock::now();
      const Slab& slab = plan_.slabs[t.slab];
      const Geometry g = geometry(axes_, slab);
      double* data = copies ? device_slab_[t.device].data() : host_slab_[t.host].data();
      const double* mult = plan_.mult_per_slab ? (copies ? device_mult_[t.device].data() : host_mult_[t.host].data())
                                               : (copies ? resident_mult_device_.data() : resident_mult_host_.data());
      const ConstFlatView<ComputeMemory> mult_view(mult, static_cast<std::size_t>(slab.ids.size() * slab.nums));
      const SlabView<ComputeMemory> slab_view(data, g.extent[0], g.extent[1], g.extent[2]);
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
      if (blas_) apply_blas(exec, mult_view, ConstSlabView<ComputeMemory>(slab_view), slab_view);
      else
#endif
        apply_mdrange(exec, slicing_, mult_view, ConstSlabView<ComputeMemory>(slab_view), slab_view, g.mult_stride);
      exec.fence();
      check_device_errors("discount::apply");
      record(kernel_, (2 * g.elements() + slab.ids.size() * slab.nums) * sizeof(double), t0);
      output.push(t);
    }
  }

  void downloader(const ExecSpace& exec) {
    Ticket t;
    while (kernel_done_.pop(t) && !aborted_) {
      const auto t0 = Clock::now();
      const auto n = static_cast<std::size_t>(plan_.slabs[t.slab].elements());
      copy_prefix(exec, host_slab_[t.host], device_slab_[t.device], n);
      exec.fence();
      record(d2h_, n * sizeof(double), t0);
      last_download_ = Clock::now();
      free_device_.push(t.device);
      computed_.push(t);
    }
  }

  void writer() {
    Ticket t;
    const auto start = Clock::now();
    auto last_print = start;
    while (computed_.pop(t) && !aborted_) {
      const auto t0 = Clock::now();
      const Slab& slab = plan_.slabs[t.slab];
      if (!job_.skip_host_io) job_.sink->write_slab(slab, host_slab_[t.host].data());
      record(write_, slab.elements() * sizeof(double), t0);
      free_host_.push(t.host);
      // A terminal gets one line redrawn every half second; a log file (Slurm)
      // gets a plain line every 5 s.
      const bool last = write_.slabs == total_pending_;
      if (job_.progress && (seconds_since(last_print) >= (tty_ ? 0.5 : 5.0) || last)) {
        last_print = Clock::now();
        const double elapsed = seconds_since(start);
        const double eta = elapsed / write_.slabs * (total_pending_ - write_.slabs);
        std::fprintf(stdout, "%s[discount_app] %s%d/%d slabs written (%.0f%%), %.2f GB out, %.2f GB/s, ETA %.0f s%s",
                     tty_ ? "\r" : "", rank_label_.c_str(), write_.slabs, total_pending_, 100.0 * write_.slabs / std::max(1, total_pending_),
                     write_.bytes / 1e9, elapsed > 0 ? write_.bytes / elapsed / 1e9 : 0.0, eta,
                     tty_ && !last ? "  " : "\n");
        std::fflush(stdout);
      }
    }
  }

  const PipelineJob& job_;
  // "rank 0 of 4: " under MPI (rank 0 prints its own share's progress).
  const std::string rank_label_ =
      job_.ranks > 1 ? "rank " + std::to_string(job_.rank) + " of " + std::to_string(job_.ranks) + ": " : "";
  const Plan& plan_;
  RunReport& report_;
  std::array<Axis, 3> axes_{};
  Slicing slicing_;
  bool blas_ = false, scan_ = false;
  int total_pending_ = 0;

  std::vector<HostPages> host_pages_;  // own the memory of the host buffers below
  std::vector<PinnedBuffer> pinned_;
  std::vector<HostBuffer> host_slab_, host_mult_;
  std::vector<bool> filled_ = std::vector<bool>(64, false);  // per staging buffer (skip_host_io)
  std::vector<DeviceBuffer> device_slab_, device_mult_;
  HostBuffer resident_mult_host_;
  DeviceBuffer resident_mult_device_;

  BlockingQueue<int> free_host_, free_device_;
  BlockingQueue<Ticket> loaded_, uploaded_, kernel_done_, computed_;
  const std::thread::id main_thread_ = std::this_thread::get_id();
  const bool tty_ = ::isatty(STDOUT_FILENO) != 0;
  Clock::time_point first_upload_{}, last_download_{};  // each written by one thread, read after join
  std::atomic<bool> aborted_{false};
  std::mutex error_mutex_;
  std::exception_ptr first_error_;

  static StageStats named(const char* name) {
    StageStats stage;
    stage.name = name;
    return stage;
  }
  StageStats read_ = named("read"), h2d_ = named("h2d"), kernel_ = named("kernel"), d2h_ = named("d2h"),
             write_ = named("write");
};

}  // namespace

std::vector<StageStats> pipeline_stages(bool device_copies) {
  std::vector<const char*> names{"read", "kernel", "write"};
  if (device_copies) names = {"read", "h2d", "kernel", "d2h", "write"};
  std::vector<StageStats> stages(names.size());
  for (std::size_t j = 0; j < names.size(); ++j) stages[j].name = names[j];
  return stages;
}

std::vector<int> rank_share(const std::vector<int>& pending, int rank, int ranks) {
  const auto n = static_cast<std::int64_t>(pending.size());
  const auto begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  return {pending.begin() + begin, pending.begin() + end};
}

bool needs_device_copies(Space space) {
  return space == Space::device && !host_accessible<Kokkos::DefaultExecutionSpace>();
}

std::string execution_space_name(Space space) {
  return space == Space::device ? Kokkos::DefaultExecutionSpace::name() : Kokkos::DefaultHostExecutionSpace::name();
}

void run_pipeline(const PipelineJob& job, RunReport& report) {
  if (job.config->compute.space == Space::device) {
    Pipeline<Kokkos::DefaultExecutionSpace> pipeline(job, report);
    pipeline.run();
  } else {
    Pipeline<Kokkos::DefaultHostExecutionSpace> pipeline(job, report);
    pipeline.run();
  }
}

}  // namespace discount
