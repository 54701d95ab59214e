#include "embed/engine_thread.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace discount::embed {
namespace {

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

void run_on_engine_thread(const std::function<void()>& task) {
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
