#include "ranks/ranks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>

#include "common/error.hpp"
#include "common/host.hpp"
#include "common/knobs.hpp"

#ifdef DISCOUNT_HAVE_MPI
#include <mpi.h>
#endif

namespace discount::ranks {

namespace {

struct State {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  bool started = false;  // this process called MPI_Init_thread
  bool agreed = false;
};
State& state() {
  static State s;
  return s;
}

class ElsewhereError final : public Error {
 public:
  using Error::Error;
};

using Clock = std::chrono::steady_clock;

// The bounded wait: each collective marks when it started (0: none running);
// the watchdog ends the process once one has run longer than the timeout.
class Watchdog {
 public:
  ~Watchdog() { stop(); }

  void start(double seconds) {
    stop();
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = seconds;
    if (seconds <= 0) return;
    quit_ = false;
    thread_ = std::thread([this] { watch(); });
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  double limit() const { return limit_; }
  void set_progress(std::function<std::uint64_t()> progress) {
    std::lock_guard<std::mutex> lock(mutex_);
    progress_ = std::move(progress);
  }
  // watched: the wait counts against the limit (else it is only timed).
  Clock::time_point enter(const char* what, bool watched) {
    const auto now = Clock::now();
    if (watched) {
      what_.store(what);
      since_.store(now.time_since_epoch().count());
    }
    return now;
  }
  void leave(Clock::time_point began) {
    since_.store(0);
    spent_ += std::chrono::duration<double>(Clock::now() - began).count();
  }
  double spent() const { return spent_; }

 private:
  void watch() {
    const auto step = std::chrono::duration<double>(std::clamp(limit_ / 10, 0.05, 1.0));
    std::unique_lock<std::mutex> lock(mutex_);
    Clock::rep watched = 0;  // the wait whose progress mark is held
    std::uint64_t mark = 0;  // progress_() when that wait began, or last changed
    while (!wake_.wait_for(lock, step, [this] { return quit_; })) {
      auto since = since_.load();
      if (since == 0) continue;
      if (progress_) {
        // Ranks still at work record it in the job's shared progress: while
        // that changes, the wait starts again (a rank lagging is not a rank
        // gone).
        const std::uint64_t now_mark = progress_();
        if (since != watched) {
          watched = since;
          mark = now_mark;
        } else if (now_mark != mark) {
          mark = now_mark;
          const Clock::rep now = Clock::now().time_since_epoch().count();
          if (since_.compare_exchange_strong(since, now)) watched = now;
          continue;
        }
      }
      const double waited =
          std::chrono::duration<double>(Clock::now() - Clock::time_point(Clock::duration(since))).count();
      if (waited > limit_) give_up(waited);
    }
  }
  // The process ends here, whatever the other threads do: they may hold
  // locks (MPI's, the C++ streams') that a normal exit would wait for.
  [[noreturn]] void give_up(double waited) const {
    char line[512];
    const int n = std::snprintf(
        line, sizeof line,
        "discount_app: rank %d of %d (%s): no answer from the other ranks, and no work recorded, for %.0f s in %s "
        "(ranks.timeout %g s); the slabs this rank finished are recorded; exit 75, so that "
        "the job resumes when run again\n",
        state_rank(), state_size(), host_.c_str(), waited, what_.load(), limit_);
    if (n > 0 && ::write(STDERR_FILENO, line, std::min<std::size_t>(n, sizeof line - 1)) < 0) std::_Exit(75);
    std::_Exit(static_cast<int>(ExitCode::interrupted));
  }
  static int state_rank();
  static int state_size();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  bool quit_ = false;
  double limit_ = 0;
  std::function<std::uint64_t()> progress_;  // under mutex_
  std::atomic<Clock::rep> since_{0};
  std::atomic<const char*> what_{""};
  double spent_ = 0;  // the calling thread's only
  std::string host_ = host_name();
};

Watchdog& watchdog() {
  static Watchdog w;
  return w;
}

int Watchdog::state_rank() { return state().rank; }
int Watchdog::state_size() { return state().size; }

// Marks one collective for the watchdog while it runs.
// Inside an agreement (agree(), which collectively() ends with) the wait is
// not bounded: one rank may be doing a step alone there for as long as the
// step takes (creating or publishing the output, verifying it).
int unbounded_depth = 0;

class Bounded {
 public:
  explicit Bounded(const char* what) : began_(watchdog().enter(what, unbounded_depth == 0)) {}
  ~Bounded() { watchdog().leave(began_); }
  Bounded(const Bounded&) = delete;
  Bounded& operator=(const Bounded&) = delete;

 private:
  Clock::time_point began_;
};

class Unbounded {
 public:
  Unbounded() { ++unbounded_depth; }
  ~Unbounded() { --unbounded_depth; }
  Unbounded(const Unbounded&) = delete;
  Unbounded& operator=(const Unbounded&) = delete;
};

bool has_arg(const std::vector<std::string>& args, const char* prefix) {
  return std::any_of(args.begin(), args.end(),
                     [&](const std::string& a) { return a.compare(0, std::strlen(prefix), prefix) == 0; });
}

}  // namespace

Session::Session(int& argc, char**& argv) {
#ifdef DISCOUNT_HAVE_MPI
  // Started by a launcher (or MPI already running): join the job. A plain
  // `discount_app` run also works: MPI then makes a single-rank world.
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    state().started = true;
    if (provided < MPI_THREAD_SERIALIZED) {
      std::cerr << "discount_app: error: the MPI library gives thread level " << provided
                << "; MPI_THREAD_SERIALIZED is needed\n";
      MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::internal));
    }
  }
  auto& s = state();
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &s.local_rank);
  MPI_Comm_size(node, &s.local_size);
  MPI_Comm_free(&node);
#else
  (void)argc;
  (void)argv;
#endif
}

namespace {
bool quiet_teardown_asked = false;
}  // namespace

void quiet_teardown() { quiet_teardown_asked = true; }

Session::~Session() {
  watchdog().stop();
#ifdef DISCOUNT_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (state().started && !finalized) {
    if (quiet_teardown_asked) {
      std::fflush(stderr);
      const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (null >= 0) {
        ::dup2(null, STDERR_FILENO);
        ::close(null);
      }
    }
    MPI_Finalize();
  }
#endif
}

bool built_with_mpi() {
#ifdef DISCOUNT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

int rank() { return state().rank; }
int size() { return state().size; }

const void* communicator() {
#ifdef DISCOUNT_HAVE_MPI
  static const MPI_Comm world = MPI_COMM_WORLD;
  return multi() ? &world : nullptr;
#else
  return nullptr;
#endif
}
int local_rank() { return state().local_rank; }
int local_size() { return state().local_size; }

int local_device(int visible_devices) { return visible_devices > 0 ? local_rank() % visible_devices : 0; }

int threads_per_rank(int process_cpus, int node_cpus) {
  if (process_cpus <= 0) return 0;
  if (process_cpus < node_cpus) return process_cpus;
  return std::max(1, node_cpus / local_size());
}

std::vector<std::string> kokkos_rank_args(const std::vector<std::string>& user_args, int visible_devices, int threads) {
  std::vector<std::string> args;
  if (local_size() <= 1) return args;
  if (visible_devices > 0 && !has_arg(user_args, "--kokkos-device") && !has_arg(user_args, "--kokkos-num-devices"))
    args.push_back("--kokkos-device-id=" + std::to_string(local_device(visible_devices)));
  // Without a launcher binding or OMP_NUM_THREADS, every rank's OpenMP would
  // start one thread per core of the node: share them instead.
  if (!has_arg(user_args, "--kokkos-threads") && !has_arg(user_args, "--kokkos-num-threads") &&
      !environment_value("OMP_NUM_THREADS") && threads > 0)
    args.push_back("--kokkos-threads=" + std::to_string(threads));
  return args;
}

void set_timeout(double seconds) {
  if (multi())
    watchdog().start(seconds);
  else
    watchdog().stop();
}
void set_progress(std::function<std::uint64_t()> progress) { watchdog().set_progress(std::move(progress)); }
double timeout() { return watchdog().limit(); }
double collective_seconds() { return watchdog().spent(); }

#ifdef DISCOUNT_HAVE_MPI
std::vector<std::string> hosts() {
  const std::string mine = host_name();
  if (!multi()) return {mine};
  Bounded bounded("MPI_Allgather (host names)");
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size());
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(size());
  int total = 0;
  for (int r = 0; r < size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(total, '\0');
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size(); ++r) out.push_back(all.substr(offsets[r], lengths[r]));
  return out;
}
void barrier() {
  if (!multi()) return;
  Bounded bounded("MPI_Barrier");
  MPI_Barrier(MPI_COMM_WORLD);
}
std::uint64_t min(std::uint64_t value) {
  Bounded bounded("MPI_Allreduce");
  if (multi()) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  return value;
}
int max(int value) {
  Bounded bounded("MPI_Allreduce");
  if (multi()) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return value;
}
double max(double value) {
  Bounded bounded("MPI_Allreduce");
  if (multi()) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}
void sum(std::vector<double>& values) {
  Bounded bounded("MPI_Allreduce");
  if (multi())
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
// Unsigned sums wrap modulo 2^64 in MPI as in C++.
void sum(std::vector<std::uint64_t>& values) {
  Bounded bounded("MPI_Allreduce");
  if (multi())
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}
void sum(std::uint64_t& value) {
  Bounded bounded("MPI_Allreduce");
  if (multi()) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}
void broadcast(std::string& text) {
  if (!multi()) return;
  Bounded bounded("MPI_Bcast");
  unsigned long long n = text.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text.resize(n);
  if (n > 0) MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}
void abort_job(int exit_code) {
  if (multi()) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}
#else
std::vector<std::string> hosts() { return {host_name()}; }
void barrier() {}
std::uint64_t min(std::uint64_t value) { return value; }
int max(int value) { return value; }
double max(double value) { return value; }
void sum(std::vector<double>&) {}
void sum(std::vector<std::uint64_t>&) {}
void sum(std::uint64_t&) {}
void broadcast(std::string&) {}
void abort_job(int exit_code) { std::exit(exit_code); }
#endif

void agree(std::exception_ptr error) {
  int code = 0;
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) { code = static_cast<int>(e.code()); } catch (...) {
      code = static_cast<int>(ExitCode::internal);
    }
  }
  if (!multi()) {
    if (error) {
      state().agreed = true;
      std::rethrow_exception(error);
    }
    return;
  }
  // The job's exit code is the highest any rank reports; the lowest rank
  // with that code explains it.
  const Unbounded unbounded;
  const int worst = max(code);
  if (worst == 0) return;
  const int reporter = -max(code == worst ? -rank() : -size());
  state().agreed = true;
  if (error && rank() == reporter) std::rethrow_exception(error);
  throw ElsewhereError(static_cast<ExitCode>(worst), "stopped: rank " + std::to_string(reporter) + " failed");
}

bool reported_elsewhere(const std::exception& error) { return dynamic_cast<const ElsewhereError*>(&error) != nullptr; }
bool error_agreed() { return state().agreed; }

}  // namespace discount::ranks
