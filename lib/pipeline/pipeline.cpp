#include "pipeline/pipeline.hpp"

#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/affinity.hpp"
#include "common/error.hpp"
#include "common/host_pages.hpp"
#include "common/quote.hpp"
#include "common/startup.hpp"
#include "io/finite.hpp"
#include "kernels/apply.hpp"
#include "kernels/features.hpp"
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
#include "kernels/blas.hpp"
#endif
#include "pipeline/exec_instances.hpp"
#include "pipeline/input_sums.hpp"
#include "pipeline/queue.hpp"
#include "pipeline/test_hooks.hpp"
#include "ranks/ranks.hpp"
#include "report/progress.hpp"

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

// Seconds covered by at least one of the intervals (which may overlap).
double union_seconds(std::vector<std::pair<Clock::time_point, Clock::time_point>> intervals) {
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
  // Of the input bytes read for the slab, when the sink records them: taken
  // by a helper thread while the reader goes on, settled before the kernel
  // overwrites the staging buffer.
  std::shared_ptr<std::future<InputSums>> pending_sums;
  InputSums sums;
  void settle_sums() {
    if (!pending_sums) return;
    sums = pending_sums->get();
    pending_sums.reset();
  }
};

// `key` is the YAML key that names the dataset (input.multiplier or
// input.discount), as the user writes it; `dataset` the name it gives.
[[noreturn]] void nonfinite_error(const char* key, const std::string& dataset, double value, const std::string& where) {
  throw data_error(std::string(key) + ": dataset " + quote_for_message(dataset) + ": " +
                   (value != value ? "NaN" : value > 0 ? "+Inf" : "-Inf") + " at [" + where +
                   "] (input.nonfinite: error; set it to propagate to let NaN/Inf through)");
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

// `bytes` of a memory space's memory, freed on destruction.
template <class Space>
class PinnedBlock {
 public:
  explicit PinnedBlock(std::size_t bytes) : bytes_(bytes), data_(Space().allocate(bytes)) {}
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  ~PinnedBlock() { Space().deallocate(data_, bytes_); }
  void* data() const { return data_; }

 private:
  std::size_t bytes_;
  void* data_;
};

template <class ExecSpace>
class Pipeline {
  using ComputeMemory = typename ExecSpace::memory_space;
  static constexpr bool copies = !host_accessible<ExecSpace>();
#ifdef KOKKOS_ENABLE_CUDA
  using StagingSpace = std::conditional_t<copies, Kokkos::CudaHostPinnedSpace, Kokkos::HostSpace>;
#else
  using StagingSpace = Kokkos::HostSpace;
#endif
  // Staging buffers are views of memory the pipeline owns: pinned
  // allocations for a GPU, else HostPages (common/host_pages.hpp says why).
  using HostBuffer = Kokkos::View<double*, StagingSpace, Kokkos::MemoryUnmanaged>;
  // Pinned memory is taken through the memory space itself, not a managed
  // View: the stager thread allocates it while the pipeline runs.
  static constexpr bool kLazyStaging = !std::is_same_v<StagingSpace, Kokkos::HostSpace>;
  using DeviceBuffer = Kokkos::View<double*, ComputeMemory>;

 public:
  Pipeline(const PipelineJob& job, RunReport& report)
      : job_(job), spec_(*job.spec), plan_(*job.plan), report_(report) {
    axes_ = job.input->axes();
    require_kernel_compiled_in(spec_.kernel);
    blas_ = spec_.kernel == KernelKind::blas;
    scan_ = spec_.check_finite && job.input->may_hold_nonfinite();
    host_slab_.resize(static_cast<std::size_t>(plan_.host_buffers));
    if (plan_.mult_per_slab) host_mult_.resize(static_cast<std::size_t>(plan_.host_buffers));
    const std::size_t slab_elems = plan_.slab_bytes / sizeof(double);
    const std::size_t mult_elems = plan_.slab_mult_bytes / sizeof(double);
    for (int s = 0; s < plan_.device_buffers; ++s) {
      device_slab_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_slab"), slab_elems);
      if (plan_.mult_per_slab)
        device_mult_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::device_mult"),
                                  mult_elems);
    }
    const std::size_t n = plan_.mult_bytes / sizeof(double);
    if (!plan_.mult_per_slab) resident_mult_host_ = host_buffer(n);
    startup::mark("buffers (staging ring: made ready while streaming)");
    if (!plan_.mult_per_slab) {
      startup::first_read();
      const auto t0 = Clock::now();
      read_multiplier(spec_.ids, resident_mult_host_.data());
      stats(Stage::read).bytes += resident_stage_bytes(Stage::read, plan_.mult_bytes, plan_.mult_per_slab);
      stats(Stage::read).seconds += seconds_since(t0);
      busy_intervals_.emplace_back(t0, Clock::now());
      if (job_.sink->wants_input_sums())
        whole_mult_sum_ = multiplier_sum(resident_mult_host_.data(), spec_.ids, plan_.request.nums);
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
    pending = rank_share(pending, spec_.rank, spec_.ranks);
    for (int s = 0; s < plan_.device_buffers; ++s) free_device_.push(s);
    total_pending_ = static_cast<int>(pending.size());

    ExecInstances<ExecSpace> instances(copies ? 3 : 1);
    std::vector<std::thread> threads;
    threads.emplace_back([&] { guarded([&] { stage_buffers(); }, {}); });
    threads.emplace_back([&] { guarded([&] { reader(pending); }, {&loaded_}); });
    if (copies) {
      threads.emplace_back([&] { guarded([&] { uploader(instances.get(1)); }, {&uploaded_}); });
      threads.emplace_back([&] { guarded([&] { downloader(instances.get(2)); }, {&computed_}); });
    }
    threads.emplace_back([&] { guarded([&] { writer(); }, {}); });
    guarded([&] { compute(instances.get(0)); }, {copies ? &kernel_done_ : &computed_});
    for (auto& t : threads) t.join();
    if (first_error_) std::rethrow_exception(first_error_);

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
    report_.staging_seconds = staging_seconds_;
  }

 private:
  HostBuffer host_buffer(std::size_t elements) {
    if constexpr (kLazyStaging) {
      pinned_.emplace_back(elements * sizeof(double));
      return HostBuffer(static_cast<double*>(pinned_.back().data()), elements);
    } else {
      host_pages_.emplace_back(elements * sizeof(double));
      return HostBuffer(static_cast<double*>(host_pages_.back().data()), elements);
    }
  }

  // Staging buffer s (and its multBy rows when each slab brings its own).
  void make_staging(int s) {
    host_slab_[static_cast<std::size_t>(s)] = host_buffer(plan_.slab_bytes / sizeof(double));
    if (plan_.mult_per_slab)
      host_mult_[static_cast<std::size_t>(s)] = host_buffer(plan_.slab_mult_bytes / sizeof(double));
  }

  // Pinning host memory runs at a few GB/s, and so does the first touch of
  // fresh pages (far less in a VM whose memory the hypervisor hands out page
  // by page: 0.1-0.2 GB/s on the development VM), so a ring of several GB
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

  void read_multiplier(Range ids, double* buffer) {
    job_.input->read_multiplier(ids, buffer);
    if (!scan_) return;
    const std::int64_t n = ids.size() * plan_.request.nums;
    const std::int64_t bad = find_nonfinite(buffer, n);
    if (bad >= 0)
      nonfinite_error("input.multiplier", spec_.multiplier, buffer[bad],
                      "id " + std::to_string(ids.begin + bad / plan_.request.nums) + ", num " +
                          std::to_string(bad % plan_.request.nums));
  }

  Range absolute(Range r, Range selection) const { return {selection.begin + r.begin, selection.begin + r.end}; }

  void reader(const std::vector<int>& pending) {
    for (int index : pending) {
      Ticket t;
      if (!free_host_.pop(t.host) || stop_requested()) break;
      startup::first_read();
      t.slab = index;
      const Slab& slab = plan_.slabs[index];
      const auto t0 = Clock::now();
      const Range dates = absolute(slab.dates, spec_.dates), ids = absolute(slab.ids, spec_.ids);
      if (plan_.mult_per_slab) read_multiplier(ids, host_mult_[t.host].data());
      double* buffer = host_slab_[t.host].data();
      const Geometry g = geometry(axes_, slab);
      job_.input->read_discount(dates, ids, buffer);
      if (scan_) {
        const std::int64_t bad = find_nonfinite(buffer, g.elements());
        if (bad >= 0) {
          const auto origin = discount_box(job_.input->shape(), axes_, dates, ids).start;
          nonfinite_error("input.discount", spec_.discount, buffer[bad], slab_coordinates(bad, axes_, g.extent, origin));
        }
      }
      if (job_.sink->wants_input_sums())
        t.pending_sums = std::make_shared<std::future<InputSums>>(std::async(
            std::launch::async, [this, &slab, dates, ids, buffer, t] { return input_sums(slab, dates, ids, buffer, t.host); }));
      record(Stage::read, slab, t0);
      loaded_.push(t);
    }
  }

  // The checksums of the bytes just read for a slab (pipeline/input_sums.hpp):
  // its discount box and the multBy rows it uses (date slabs all use the
  // whole resident multBy, summed once). Reads members only: runs on helper threads.
  InputSums input_sums(const Slab& slab, Range dates, Range ids, const double* buffer, int host) const {
    InputSums sums;
    sums.known = true;
    sums.disc = discount_sum(buffer, job_.input->shape(), axes_, dates, ids);
    const std::int64_t nums = plan_.request.nums;
    if (plan_.mult_per_slab) {
      sums.mult = multiplier_sum(host_mult_[host].data(), ids, nums);
    } else if (ids.begin == spec_.ids.begin && ids.end == spec_.ids.end) {
      sums.mult = whole_mult_sum_;
    } else {
      sums.mult = multiplier_sum(resident_mult_host_.data() + slab.ids.begin * nums, ids, nums);
    }
    return sums;
  }

  void uploader(const ExecSpace& exec) {
    Ticket t;
    while (loaded_.pop(t) && !aborted_) {
      if (!free_device_.pop(t.device)) break;
      const auto t0 = Clock::now();
      if (stats(Stage::h2d).slabs == 0) first_upload_ = t0;
      const Slab& slab = plan_.slabs[t.slab];
      const auto n = static_cast<std::size_t>(slab.elements());
      copy_prefix(exec, device_slab_[t.device], host_slab_[t.host], n);
      if (plan_.mult_per_slab)
        copy_prefix(exec, device_mult_[t.device], host_mult_[t.host],
                    static_cast<std::size_t>(slab.ids.size() * slab.nums));
      exec.fence();
      record(Stage::h2d, slab, t0);
      uploaded_.push(t);
    }
  }

  void compute(const ExecSpace& exec) {
    auto& input = copies ? uploaded_ : loaded_;
    auto& output = copies ? kernel_done_ : computed_;
    Ticket t;
    while (input.pop(t) && !aborted_) {
      t.settle_sums();  // before the kernel overwrites the staging buffer (host kernels work in place)
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
        apply_mdrange(exec, spec_.slicing, mult_view, ConstSlabView<ComputeMemory>(slab_view), slab_view,
                      g.mult_stride);
      exec.fence();
      check_device_errors("discount::apply");
      record(Stage::kernel, slab, t0);
      output.push(t);
    }
  }

  void downloader(const ExecSpace& exec) {
    Ticket t;
    while (kernel_done_.pop(t) && !aborted_) {
      const auto t0 = Clock::now();
      const Slab& slab = plan_.slabs[t.slab];
      copy_prefix(exec, host_slab_[t.host], device_slab_[t.device], static_cast<std::size_t>(slab.elements()));
      exec.fence();
      record(Stage::d2h, slab, t0);
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
      job_.sink->write_slab(slab, host_slab_[t.host].data(), t.sums);
      record(Stage::write, slab, t0);
      free_host_.push(t.host);
      // A terminal gets one line redrawn every half second; a log file (Slurm)
      // gets a time-stamped line every 5 s.
      const StageStats& written = stats(Stage::write);
      const bool last = written.slabs == total_pending_;
      const bool print = job_.progress && (seconds_since(last_print) >= (tty_ ? 0.5 : 5.0) || last);
      if (print || job_.on_progress) {
        const double elapsed = seconds_since(start);
        const ProgressFields fields{rank_label_, written.slabs, total_pending_, written.bytes / 1e9,
                                    elapsed > 0 ? written.bytes / elapsed / 1e9 : 0.0,
                                    elapsed / written.slabs * (total_pending_ - written.slabs)};
        if (job_.on_progress) job_.on_progress(fields);
        if (print) {
          last_print = Clock::now();
          print_progress(fields, last);
        }
      }
      test_hold_.after_slab(written.slabs, [this] { return stop_requested(); });  // tests only (test_hooks.hpp)
    }
    // However the run ends (done, stopped, failed), what is printed next
    // (the summary, an error, a warning) starts on a line of its own.
    if (line_open_) {
      std::fputs("\n", stdout);
      std::fflush(stdout);
      line_open_ = false;
    }
  }

  // On a terminal: "\r", the line fitted to the width read now (the window
  // may have been resized), then erase to the end of the line, so nothing of
  // a longer earlier line remains. In a log: one whole line per call, time-stamped.
  void print_progress(const ProgressFields& fields, bool last) {
    if (tty_) {
      const std::string text = progress_line(fields, terminal_columns(STDOUT_FILENO));
      std::fprintf(stdout, "\r%s\x1b[K%s", text.c_str(), last ? "\n" : "");
      line_open_ = !last;
    } else {
      std::fprintf(stdout, "%s %s\n", utc_timestamp(std::time(nullptr)).c_str(), progress_line(fields, 0).c_str());
    }
    std::fflush(stdout);
  }

  // One slab's work on a stage, timed from t0, counted by plan/stages.hpp.
  // The interval is kept too: the stages overlap, so the time in no stage is
  // the wall time less their union.
  void record(Stage stage, const Slab& slab, Clock::time_point t0) {
    const auto t1 = Clock::now();
    StageStats& s = stats(stage);
    s.bytes += stage_bytes(stage, traffic(plan_, slab));
    s.seconds += std::chrono::duration<double>(t1 - t0).count();
    ++s.slabs;
    std::lock_guard<std::mutex> lock(busy_mutex_);
    busy_intervals_.emplace_back(t0, t1);
  }
  // Each stage's counters are written by its own thread only, read after join.
  StageStats& stats(Stage stage) { return stats_[static_cast<std::size_t>(stage)]; }

  const PipelineJob& job_;
  const PipelineSpec& spec_;
  // "rank 0 of 4: " under MPI (rank 0 prints its own share's progress).
  const std::string rank_label_ =
      spec_.ranks > 1 ? "rank " + std::to_string(spec_.rank) + " of " + std::to_string(spec_.ranks) + ": " : "";
  const Plan& plan_;
  RunReport& report_;
  std::array<Axis, 3> axes_{};
  bool blas_ = false, scan_ = false;
  int total_pending_ = 0;

  std::vector<HostPages> host_pages_;  // own the memory of the host buffers below
  std::uint64_t staging_bytes_ = 0;    // the staging ring, made ready by stage_buffers()
  double staging_seconds_ = 0.0;
  std::list<PinnedBlock<StagingSpace>> pinned_;  // or these (pinned; the blocks do not move)
  std::vector<HostBuffer> host_slab_, host_mult_;
  std::vector<DeviceBuffer> device_slab_, device_mult_;
  HostBuffer resident_mult_host_;
  std::uint64_t whole_mult_sum_ = 0;  // of resident_mult_host_, taken once it is read
  DeviceBuffer resident_mult_device_;

  BlockingQueue<int> free_host_, free_device_;
  BlockingQueue<Ticket> loaded_, uploaded_, kernel_done_, computed_;
  const std::thread::id main_thread_ = std::this_thread::get_id();
  const bool tty_ = stdout_is_terminal();
  bool line_open_ = false;  // the writer drew a progress line on the terminal without ending it
  const TestHold test_hold_;  // DISCOUNT_TEST_HOLD: the e2e tests' pause points
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

}  // namespace

std::vector<int> rank_share(const std::vector<int>& pending, int rank, int ranks) {
  const auto n = static_cast<std::int64_t>(pending.size());
  const auto begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  return {pending.begin() + begin, pending.begin() + end};
}

void combine_rank_reports(RunReport& report) {
  if (!ranks::multi()) return;
  for (auto& stage : report.stages) {
    ranks::sum(stage.bytes);
    stage.seconds = ranks::max(stage.seconds);
    std::uint64_t slabs = static_cast<std::uint64_t>(stage.slabs);
    ranks::sum(slabs);
    stage.slabs = static_cast<int>(slabs);
  }
  ranks::sum(report.input_bytes);
  ranks::sum(report.output_bytes);
  std::uint64_t run = static_cast<std::uint64_t>(report.slabs_run);
  ranks::sum(run);
  report.slabs_run = static_cast<int>(run);
  report.device_path_seconds = ranks::max(report.device_path_seconds);
  report.any_stage_seconds = ranks::max(report.any_stage_seconds);
}

bool needs_device_copies(Space space) {
  return space == Space::device && !host_accessible<Kokkos::DefaultExecutionSpace>();
}

std::string execution_space_name(Space space) {
  return space == Space::device ? Kokkos::DefaultExecutionSpace::name() : Kokkos::DefaultHostExecutionSpace::name();
}

void run_pipeline(const PipelineJob& job, RunReport& report) {
  if (job.spec->space == Space::device) {
    Pipeline<Kokkos::DefaultExecutionSpace> pipeline(job, report);
    pipeline.run();
  } else {
    Pipeline<Kokkos::DefaultHostExecutionSpace> pipeline(job, report);
    pipeline.run();
  }
}

}  // namespace discount
