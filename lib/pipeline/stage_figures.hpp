// One run's stage figures (pipeline/pipeline_state.hpp holds them): each
// stage's counters, as plan/stages.hpp counts them, and the intervals in
// which any stage was at work, whose union is the time spent in some stage.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <vector>

#include "pipeline/stage_parts.hpp"
#include "plan/plan.hpp"
#include "plan/stages.hpp"
#include "report/report.hpp"

namespace discount::pipeline_detail {

class StageFigures {
 public:
  explicit StageFigures(const Plan& plan) : plan_(plan) {}
  StageFigures(const StageFigures&) = delete;
  StageFigures& operator=(const StageFigures&) = delete;

  // Each stage's counters are written by its own thread only (the piece
  // streamer's under the write lock), read after join.
  StageStats& stats(Stage stage) { return stats_[static_cast<std::size_t>(stage)]; }

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
  // Work from t0 until now that is on no one slab's figure (the resident
  // multBy's read, a streamer thread's slab or share of pieces).
  void busy_since(Clock::time_point t0) {
    std::lock_guard<std::mutex> lock(busy_mutex_);
    busy_intervals_.emplace_back(t0, Clock::now());
  }
  // The time some stage was at work, after the threads joined.
  double any_stage_seconds() const { return union_seconds(busy_intervals_); }

 private:
  const Plan& plan_;
  std::mutex busy_mutex_;
  std::vector<Interval> busy_intervals_;  // every stage's timed work
  std::array<StageStats, kStageCount> stats_ = [] {
    std::array<StageStats, kStageCount> named{};
    for (Stage stage : kAllStages) named[static_cast<std::size_t>(stage)].name = stage_name(stage);
    return named;
  }();
};

}  // namespace discount::pipeline_detail
