// What every thread of a run shares, whichever way it runs (the staging
// ring, pipeline/staged_pipeline.hpp, or the piece streamer,
// pipeline/piece_streamer.hpp): the stage figures, the first error and the
// abort it sets off, the stop request, and the write counts behind the
// progress line and the tests' pause points.
#pragma once

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "common/affinity.hpp"
#include "common/test_hooks.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stage_figures.hpp"
#include "pipeline/stage_parts.hpp"

namespace discount::pipeline_detail {

class PipelineState {
 public:
  explicit PipelineState(const PipelineJob& job) : job_(job), figures_(*job.plan) {}
  PipelineState(const PipelineState&) = delete;
  PipelineState& operator=(const PipelineState&) = delete;

  StageFigures& figures() { return figures_; }
  StageStats& stats(Stage stage) { return figures_.stats(stage); }

  // Runs a thread's work; on failure records the first error, sets the
  // abort and calls `on_failure` (the staging ring closes its queues there,
  // so the other stages stop).
  template <class Body, class OnFailure>
  void guarded(Body&& body, OnFailure&& on_failure) {
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
      on_failure();
    }
  }
  bool aborted() const { return aborted_; }
  bool stop_requested() const { return aborted_ || (job_.stop && job_.stop->load() != 0); }
  // After the threads joined: the first error, if any, thrown on this thread.
  void rethrow_first_error() const {
    if (first_error_) std::rethrow_exception(first_error_);
  }

  // The slabs this rank runs, and the threads that write them.
  void set_pending(int slabs) { total_pending_ = slabs; }
  int pending() const { return total_pending_; }
  void set_writers(int writers) { writers_ = writers; }
  int writers() const { return writers_; }
  // The write stage's counts, progress figures and test hold.
  std::mutex& write_mutex() { return write_mutex_; }

  // After a slab's write, under write_mutex(): the progress line, the test hold.
  void slab_written_locked() {
    const StageStats& written = stats(Stage::write);
    if (job_.progress)
      job_.progress({written.slabs, total_pending_, written.bytes, seconds_since(write_start_), false});
    test_hold_.after_slab(written.slabs, [this] { return stop_requested(); });  // tests only (test_hooks.hpp)
  }
  // However the run ends (done, stopped, failed), the last writer to finish
  // gives the final figures, so the progress line ends once.
  void writer_done() {
    std::lock_guard<std::mutex> lock(write_mutex_);
    if (++writers_done_ == writers_ && job_.progress) {
      const StageStats& written = stats(Stage::write);
      job_.progress({written.slabs, total_pending_, written.bytes, seconds_since(write_start_), true});
    }
  }

 private:
  const PipelineJob& job_;
  StageFigures figures_;
  const std::thread::id main_thread_ = std::this_thread::get_id();
  std::mutex error_mutex_;
  std::exception_ptr first_error_;  // under error_mutex_
  std::atomic<bool> aborted_{false};
  int total_pending_ = 0;
  int writers_ = 1, writers_done_ = 0;  // writer threads, and those that have finished (under write_mutex_)
  std::mutex write_mutex_;
  const Clock::time_point write_start_ = Clock::now();
  const TestHold test_hold_{job_.spec->knobs.test_hold};  // DISCOUNT_TEST_HOLD: the e2e tests' pause points
};

}  // namespace discount::pipeline_detail
