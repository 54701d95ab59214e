#include "embed/engine_thread.hpp"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/error.hpp"

namespace discount::embed {
namespace {

// started: an engine thread has been started in this process (or in the
// parent it was forked from); lost: this process is such a fork, where that
// thread and the Kokkos state it owns do not run. Lock-free atomics: all a
// fork handler in a threaded process may safely touch.
std::atomic<bool> g_engine_started{false};
std::atomic<bool> g_engine_lost{false};

void on_fork_child() {
  if (g_engine_started.load()) g_engine_lost.store(true);
}
// Registered as the library loads, so no fork can fall between a first call
// and the handler.
[[maybe_unused]] const int g_fork_handler = pthread_atfork(nullptr, nullptr, &on_fork_child);

struct Engine {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> tasks;

  Engine() {
    std::thread([this] {
      for (;;) {
        std::function<void()> task;
        {
          std::unique_lock<std::mutex> lock(mutex);
          wake.wait(lock, [this] { return !tasks.empty(); });
          task = std::move(tasks.front());
          tasks.pop_front();
        }
        task();
      }
    }).detach();
  }
};

// Never destroyed: the detached thread may still wait on it at exit.
Engine& engine() {
  static Engine* e = new Engine();
  return *e;
}

}  // namespace

bool engine_lost_to_fork() { return g_engine_lost.load(); }

std::string engine_lost_message() {
  return "this process was forked from one that had already used discount_app (its engine: Kokkos and its "
         "threads), which does not survive fork() and cannot start again here; start worker processes with "
         "multiprocessing.get_context(\"spawn\") or get_context(\"forkserver\") (concurrent.futures: "
         "ProcessPoolExecutor(mp_context=...)), or fork them before the parent's first discount_app call";
}

void run_on_engine_thread(const std::function<void()>& task) {
  if (engine_lost_to_fork()) throw Error(static_cast<ExitCode>(kEngineLostExitCode), engine_lost_message());
  g_engine_started.store(true);  // before the thread exists: a fork from now on loses it
  std::mutex done_mutex;
  std::condition_variable done_cv;
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(engine().mutex);
    engine().tasks.push_back([&] {
      task();
      std::lock_guard<std::mutex> done_lock(done_mutex);
      done = true;
      done_cv.notify_all();
    });
  }
  engine().wake.notify_one();
  std::unique_lock<std::mutex> lock(done_mutex);
  done_cv.wait(lock, [&] { return done; });
}

}  // namespace discount::embed
