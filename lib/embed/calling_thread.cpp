#include "embed/calling_thread.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <new>
#include <thread>

#include "common/affinity.hpp"

namespace discount::embed {

namespace {

// Elements per chunk a thread claims: 256 KiB of float64 out, tens of
// microseconds of work, so a helper preempted mid-chunk holds little.
constexpr std::int64_t kChunkElements = 32768;

// Extents and element strides of the three arrays over disc's three axes
// (mult's stride along the date axis is 0: it is broadcast over dates).
struct Walk {
  std::array<std::int64_t, 3> n{}, m{}, d{}, o{};
};

// The two inner axes as one when every array steps through them as a run
// (C-contiguous arrays with dates outermost: the whole slab of one date).
Walk merged(Walk w) {
  const auto run = [&](const std::array<std::int64_t, 3>& s) { return s[1] == s[2] * w.n[2]; };
  if (run(w.m) && run(w.d) && run(w.o)) {
    w.n[2] *= w.n[1];
    w.n[1] = 1;
  }
  return w;
}

// The hot loop (float64 arrays in runs): compiled for AVX-512, AVX2 and the
// baseline, picked by the CPU at load time, as NumPy's own loops are; on the
// 2-core VM's AVX-512 cores the baseline's SSE2 loop ran ~10% behind
// np.multiply on arrays that fit the cache.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void multiply_run(const double* mult, const double* disc, double* out, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) out[k] = mult[k] * disc[k];
}

template <class M, class D>
void multiply_run(const M* mult, const D* disc, double* out, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) out[k] = static_cast<double>(mult[k]) * static_cast<double>(disc[k]);
}

// Elements [first, last) of the walk in its (row, element) order, rows being
// (a, b) pairs of the two outer axes.
template <class M, class D>
void walk(const M* mult, const D* disc, double* out, const Walk& w, std::int64_t first, std::int64_t last) {
  const std::int64_t n = w.n[2];
  const bool unit = w.m[2] == 1 && w.d[2] == 1 && w.o[2] == 1;
  const bool broadcast = w.m[2] == 0 && w.d[2] == 1 && w.o[2] == 1;  // dates innermost
  while (first < last) {
    const std::int64_t row = first / n, k0 = first % n, k1 = std::min(n, k0 + (last - first));
    const std::int64_t a = row / w.n[1], b = row % w.n[1];
    const M* mp = mult + a * w.m[0] + b * w.m[1];
    const D* dp = disc + a * w.d[0] + b * w.d[1];
    double* op = out + a * w.o[0] + b * w.o[1];
    if (unit) {
      multiply_run(mp + k0, dp + k0, op + k0, k1 - k0);
    } else if (broadcast) {
      const double factor = static_cast<double>(*mp);
      for (std::int64_t k = k0; k < k1; ++k) op[k] = factor * static_cast<double>(dp[k]);
    } else {
      for (std::int64_t k = k0; k < k1; ++k)
        op[k * w.o[2]] = static_cast<double>(mp[k * w.m[2]]) * static_cast<double>(dp[k * w.d[2]]);
    }
    first += k1 - k0;
  }
}

// One call's arrays and walk, type-erased for the helpers.
struct Task {
  const ArrayRef* mult = nullptr;
  const ArrayRef* disc = nullptr;
  double* out = nullptr;
  Walk w;
  std::int64_t elements = 0;
  std::int64_t chunks = 0;

  void run(std::int64_t chunk) const {
    const std::int64_t first = chunk * kChunkElements, last = std::min(elements, first + kChunkElements);
    const auto with_disc = [&](const auto* m) {
      if (disc->type == ElementType::f32)
        walk(m, static_cast<const float*>(disc->data), out, w, first, last);
      else
        walk(m, static_cast<const double*>(disc->data), out, w, first, last);
    };
    if (mult->type == ElementType::f32)
      with_disc(static_cast<const float*>(mult->data));
    else
      with_disc(static_cast<const double*>(mult->data));
  }
};

// Threads that help the calling thread when they are on a core. The caller
// claims chunks itself from the same counter and waits only for chunks a
// helper has claimed and not finished, never for a helper that has not
// started: on a busy machine a descheduled helper claims nothing and the
// caller does the work alone (a thread team's barrier would wait for it;
// with two busy loops beside it a team's 16 MB call took 8-12 ms, the
// caller alone 0.8 ms). One call at a time uses them; a second, concurrent
// call runs on its own thread alone.
//
// The claim counter carries the call's generation in its upper 24 bits, so a
// helper that wakes late cannot claim a chunk of a later call.
class Helpers {
 public:
  explicit Helpers(int count) {
    for (int t = 0; t < count; ++t) std::thread([this] { serve(); }).detach();
  }

  // Runs task's chunks on this thread and on whichever of `wake` helpers get a core.
  void run(const Task& task, int wake) {
    std::uint64_t generation = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation = ++generation_;
      claim_.store((generation << kChunkBits) | kClosed);  // claims of the last call end; none of this one yet
      task_ = task;
      chunks_.store(task.chunks);
      finished_.store(0);
      claim_.store(generation << kChunkBits);
    }
    for (int t = 0; t < wake; ++t) wake_.notify_one();
    work(generation);
    while (finished_.load() < task.chunks) std::this_thread::yield();  // chunks a helper is finishing
  }

  bool try_lock() { return call_.try_lock(); }
  void unlock() { call_.unlock(); }

 private:
  static constexpr int kChunkBits = 40;
  static constexpr std::uint64_t kClosed = (std::uint64_t{1} << kChunkBits) - 1;

  // Claims and runs chunks of call `generation` until none is left.
  void work(std::uint64_t generation) {
    for (;;) {
      std::uint64_t word = claim_.load();
      std::int64_t chunk = 0;
      do {
        if ((word >> kChunkBits) != generation) return;  // a later call's chunks
        chunk = static_cast<std::int64_t>(word & kClosed);
        if (chunk >= chunks_.load()) return;
      } while (!claim_.compare_exchange_weak(word, word + 1));
      task_.run(chunk);
      finished_.fetch_add(1);
    }
  }

  // A helper sleeps until a call wakes it (notify_one: only as many as the
  // call asks for), then helps with that call's chunks.
  void serve() {
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t generation = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        generation = seen = generation_;
      }
      work(generation);
    }
  }

  std::mutex call_;  // one call at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::uint64_t generation_ = 0;
  Task task_;  // read by a helper only after it claimed a chunk of this generation
  std::atomic<std::int64_t> chunks_{0};
  std::atomic<std::uint64_t> claim_{0};
  std::atomic<std::int64_t> finished_{0};
};

// Threads runnable on the whole machine right now, this one included
// (/proc/loadavg's fourth field, the scheduler's own count; 0 if unknown).
int runnable_now() {
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128] = {};
  const ssize_t got = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (got <= 0) return 0;
  double a = 0, b = 0, c = 0;
  int running = 0, total = 0;
  return std::sscanf(text, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &total) == 5 ? running : 0;
}

// The CPUs the job may use, as the engine's own thread counts take them.
int usable_cpus() { return std::max(1, process_cpu_count()); }

// The process's helpers, started on first use; a child forked from the
// process starts its own (the parent's threads do not exist there).
Helpers* g_helpers = nullptr;
std::mutex g_helpers_mutex;

Helpers& helpers() {
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, [] {
      g_helpers = nullptr;  // the parent's, kept by no thread here, left as they are
      new (&g_helpers_mutex) std::mutex;
    });
    return true;
  }();
  (void)registered;
  std::lock_guard<std::mutex> lock(g_helpers_mutex);
  if (!g_helpers) g_helpers = new Helpers(std::min(usable_cpus(), 64) - 1);
  return *g_helpers;
}

}  // namespace

double multiply_on_calling_thread(const ArrayRef& mult, const ArrayRef& disc, const ArrayRef& out,
                                  const std::array<Axis, 3>& axes) {
  const auto start = std::chrono::steady_clock::now();
  Walk w;
  for (std::size_t j = 0; j < 3; ++j) {
    w.n[j] = disc.shape[j];
    w.d[j] = disc.strides[j];
    w.o[j] = out.strides[j];
    w.m[j] = axes[j] == Axis::id ? mult.strides[0] : axes[j] == Axis::num ? mult.strides[1] : 0;
  }
  if (w.n[0] > 0 && w.n[1] > 0 && w.n[2] > 0) {
    Task task;
    task.mult = &mult;
    task.disc = &disc;
    task.out = static_cast<double*>(out.data);
    task.w = merged(w);
    task.elements = task.w.n[0] * task.w.n[1] * task.w.n[2];
    task.chunks = (task.elements + kChunkElements - 1) / kChunkElements;
    // Helpers only on cores nothing else wants now: on a busy machine a
    // helper would be preempted mid-chunk and the call would wait for it.
    static const int cpus = usable_cpus();
    const int idle = task.chunks > 1 && cpus > 1 ? cpus - std::max(runnable_now(), 1) : 0;
    Helpers* team = idle > 0 ? &helpers() : nullptr;
    if (team && team->try_lock()) {
      team->run(task, std::min<std::int64_t>(idle, task.chunks - 1));
      team->unlock();
    } else {
      for (std::int64_t c = 0; c < task.chunks; ++c) task.run(c);
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace discount::embed
