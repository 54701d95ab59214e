// Bytes and time predicted per stage (plan/plan.hpp), and the probe's pieces.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "common/error.hpp"
#include "common/sizes.hpp"
#include "plan/plan.hpp"

using namespace discount;

#include "support/plan_request.hpp"

using namespace discount::test_support;

namespace {

// Bytes per stage by name.
std::map<std::string, std::uint64_t> bytes_of(const std::vector<StagePrediction>& stages) {
  std::map<std::string, std::uint64_t> bytes;
  for (const auto& s : stages) bytes[s.stage] = s.bytes;
  return bytes;
}

std::vector<std::string> names_of(const std::vector<StagePrediction>& stages) {
  std::vector<std::string> names;
  for (const auto& s : stages) names.push_back(s.stage);
  return names;
}

// 100 x 4000 x 5 in 15 date slabs (14 x 7 + 2).
Plan date_plan(bool device_copies) {
  PlanRequest r = request(100, 4000, 5, 160000 + 3 * 7 * 160000 + 100);
  r.device_copies = device_copies;
  r.device_budget = std::uint64_t{1} << 30;
  return make_plan(r);
}

// 200 x 1009 x 5 in 101 id slabs (100 x 10 + 9).
Plan id_plan(bool device_copies) {
  PlanRequest r = request(200, 1009, 5, 3 * 10 * 8040 + 7);
  r.chunk_axis = Axis::id;
  r.device_copies = device_copies;
  r.device_budget = std::uint64_t{1} << 30;
  return make_plan(r);
}

}  // namespace

TEST(Predict, DateSlabsCountBytesAsThePipelineDoes) {
  const std::uint64_t data = 100u * 4000 * 5 * 8, mult = 4000u * 5 * 8;
  for (bool copies : {true, false}) {
    const Plan p = date_plan(copies);
    ASSERT_EQ(p.slabs.size(), 15u);
    const auto stages = predict(p, Limits{});
    auto bytes = bytes_of(stages);
    EXPECT_EQ(bytes["read"], data + mult);             // multBy read once, resident
    EXPECT_EQ(bytes["kernel"], 2 * data + 15 * mult);  // each slab's kernel reads all of multBy
    EXPECT_EQ(bytes["write"], data);
    if (copies) {
      EXPECT_EQ(names_of(stages), (std::vector<std::string>{"read", "h2d", "kernel", "d2h", "write"}));
      EXPECT_EQ(bytes["h2d"], data);  // the resident multBy's one upload is not a slab's
      EXPECT_EQ(bytes["d2h"], data);
    } else {
      EXPECT_EQ(names_of(stages), (std::vector<std::string>{"read", "kernel", "write"}));
    }
  }
}

TEST(Predict, IdSlabsCarryTheirMultByThroughEveryStage) {
  const std::uint64_t data = 200u * 1009 * 5 * 8, mult = 1009u * 5 * 8;
  for (bool copies : {true, false}) {
    const Plan p = id_plan(copies);
    ASSERT_EQ(p.slabs.size(), 101u);
    const auto stages = predict(p, Limits{});
    auto bytes = bytes_of(stages);
    EXPECT_EQ(bytes["read"], data + mult);
    EXPECT_EQ(bytes["kernel"], 2 * data + mult);
    EXPECT_EQ(bytes["write"], data);
    if (copies) {
      EXPECT_EQ(bytes["h2d"], data + mult);
      EXPECT_EQ(bytes["d2h"], data);
    } else {
      EXPECT_EQ(stages.size(), 3u);
    }
  }
}

TEST(Predict, ASubsetOfSlabsCountsOnlyThoseButTheResidentMultBy) {
  for (const Plan& p : {date_plan(true), id_plan(true)}) {
    std::vector<int> first, rest;
    for (const auto& slab : p.slabs) (slab.index < 4 ? first : rest).push_back(slab.index);
    auto whole = bytes_of(predict(p, Limits{})), a = bytes_of(predict(p, Limits{}, first)),
         b = bytes_of(predict(p, Limits{}, rest));
    for (const char* stage : {"h2d", "kernel", "d2h", "write"}) EXPECT_EQ(a[stage] + b[stage], whole[stage]) << stage;
    // Every process reads the resident multBy (date slabs); id slabs bring their own.
    EXPECT_EQ(a["read"] + b["read"], whole["read"] + (p.mult_per_slab ? 0 : p.mult_bytes));
  }
}

TEST(Predict, SecondsFromKnownLimitsAndUnknownStaysNegative) {
  const Plan p = date_plan(true);
  Limits limits;
  limits.read = {2.0, LinkSource::configured};
  limits.h2d = {50.0, LinkSource::measured};
  limits.kernel = {1000.0, LinkSource::measured};
  limits.d2h = {40.0, LinkSource::measured};
  // write unknown
  const auto stages = predict(p, limits);
  ASSERT_EQ(stages.size(), 5u);
  EXPECT_DOUBLE_EQ(stages[0].seconds, stages[0].bytes / 2e9);
  EXPECT_EQ(stages[0].source, "configured");
  EXPECT_DOUBLE_EQ(stages[1].seconds, stages[1].bytes / 50e9);
  EXPECT_DOUBLE_EQ(stages[2].seconds, stages[2].bytes / 1000e9);
  EXPECT_EQ(stages[2].source, "measured");
  EXPECT_DOUBLE_EQ(stages[2].gb_per_s, 1000.0);
  EXPECT_LT(stages[4].seconds, 0);
  EXPECT_EQ(stages[4].source, "");
  EXPECT_DOUBLE_EQ(predicted_wall_seconds(stages), stages[0].seconds);  // read sets the pace
  EXPECT_DOUBLE_EQ(predicted_serial_seconds(stages),
                   stages[0].seconds + stages[1].seconds + stages[2].seconds + stages[3].seconds);
  // One stage unknown: no time at all rather than a lower bound.
  const WallPrediction wall = predict_wall(p, stages, FixedCost{0.5, "measured now"});
  EXPECT_LT(wall.seconds, 0);
  EXPECT_EQ(wall.unknown, std::vector<std::string>{"write"});
  const std::string text = describe_prediction(p, stages, wall);
  EXPECT_NE(text.find("cannot predict the time: no rate known for write"), std::string::npos) << text;
  EXPECT_EQ(text.find("lower bound"), std::string::npos) << text;
  EXPECT_NE(text.find("configured"), std::string::npos) << text;
}

TEST(Predict, NothingKnownPredictsNothing) {
  const Plan p = id_plan(false);
  const auto stages = predict(p, Limits{});
  for (const auto& s : stages) EXPECT_LT(s.seconds, 0) << s.stage;
  EXPECT_LT(predicted_wall_seconds(stages), 0);
  EXPECT_LT(predicted_serial_seconds(stages), 0);
  EXPECT_NE(describe_prediction(p, Limits{}).find("unknown"), std::string::npos);
}

TEST(Predict, DescribeListsTheSameBytesPerStage) {
  const Plan p = date_plan(true);
  const std::string text = p.describe();
  for (const auto& s : predict(p, Limits{})) {
    const std::string label = s.stage == "h2d" ? "H2D" : s.stage == "d2h" ? "D2H" : s.stage;
    EXPECT_NE(text.find(label + " " + format_bytes(s.bytes)), std::string::npos) << label << "\n" << text;
  }
}

namespace {

Limits host_limits(double read, double kernel, double write) {
  Limits limits;
  limits.read = {read, LinkSource::measured, false, "", "measured now"};
  limits.kernel = {kernel, LinkSource::configured, false, "", "config limits:"};
  limits.write = {write, LinkSource::earlier_report, false, "",
                  "report out/run.json of 2026-12-01 03:41 UTC (7 min ago)"};
  return limits;
}

}  // namespace

// The model written out by hand for 15 date slabs of 100 x 4000 x 5 on the
// host: the resident multBy first, one slab through every stage, then 14
// slabs at the slowest stage's pace.
TEST(PredictWall, FixedResidentFirstSlabThenTheSlowestStagesPace) {
  const Plan p = date_plan(false);
  ASSERT_EQ(p.slabs.size(), 15u);
  ASSERT_EQ(p.host_buffers, 3);
  const auto stages = predict(p, host_limits(1.0, 10.0, 0.5));
  const WallPrediction w = predict_wall(p, stages, FixedCost{0.25, "measured now"});
  const double data = 100.0 * 4000 * 5 * 8, mult = 4000.0 * 5 * 8;
  const double read = data / 1e9 / 15, kernel = (2 * data + 15 * mult) / 10e9 / 15, write = data / 0.5e9 / 15;
  EXPECT_TRUE(w.unknown.empty());
  EXPECT_TRUE(w.fixed_known);
  EXPECT_NEAR(w.resident_seconds, mult / 1e9, 1e-12);
  EXPECT_NEAR(w.first_slab_seconds, read + kernel + write, 1e-12);
  EXPECT_NEAR(w.period_seconds, write, 1e-12);
  EXPECT_EQ(w.pace, "write");
  EXPECT_NEAR(w.seconds, 0.25 + mult / 1e9 + read + kernel + write + 14 * write, 1e-12);
  // Overlap: less than one stage after another, more than the slowest alone.
  EXPECT_LT(w.seconds - 0.25, predicted_serial_seconds(stages));
  EXPECT_GT(w.seconds - 0.25, predicted_wall_seconds(stages));
  const std::string text = describe_prediction(p, stages, w);
  for (const char* needle : {"measured now", "config limits:", "report out/run.json of 2026-12-01 03:41 UTC",
                             "14 more slab(s)", "write sets the pace", "start-up and finish", "resident multBy"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  char total[32];
  std::snprintf(total, sizeof total, "predicted wall %.2f s", w.seconds);
  EXPECT_NE(text.find(total), std::string::npos) << text;
}

// compute.kernel: fused: the reader's threads multiply, so a slab's read and
// kernel follow each other and their sum paces the run when it is slowest.
TEST(PredictWall, FusedKernelAddsToTheRead) {
  Plan p = date_plan(false);
  p.request.kernel_on_read = true;
  const auto stages = predict(p, host_limits(1.0, 2.0, 0.9));
  const WallPrediction w = predict_wall(p, stages, FixedCost{0.0, "x"});
  const double data = 100.0 * 4000 * 5 * 8, mult = 4000.0 * 5 * 8;
  const double read = data / 1e9 / 15, kernel = (2 * data + 15 * mult) / 2e9 / 15, write = data / 0.9e9 / 15;
  ASSERT_GT(read + kernel, write);
  ASSERT_LT(read, write);
  EXPECT_NEAR(w.period_seconds, read + kernel, 1e-12);
  EXPECT_EQ(w.pace, "read + fused kernel");
  EXPECT_NEAR(w.first_slab_seconds, read + kernel + write, 1e-12);
  p.request.kernel_on_read = false;  // side by side: the write is slowest
  EXPECT_NEAR(predict_wall(p, stages, FixedCost{0.0, "x"}).period_seconds, write, 1e-12);
}

// memory.staging: none: each I/O thread reads, multiplies and writes its
// pieces in turn, so every slab takes the stages' sum, with no fill and
// drain; with a GPU its copies and kernel run beside the threads' reads and
// writes, and the slower side paces the run.
TEST(PredictWall, UnstagedAddsTheThreadsStages) {
  Plan p = date_plan(false);
  p.request.unstaged = true;
  p.request.kernel_on_read = true;
  const auto stages = predict(p, host_limits(1.0, 2.0, 0.9));
  const WallPrediction w = predict_wall(p, stages, FixedCost{0.5, "x"});
  const double data = 100.0 * 4000 * 5 * 8, mult = 4000.0 * 5 * 8;
  const double read = data / 1e9 / 15, kernel = (2 * data + 15 * mult) / 2e9 / 15, write = data / 0.9e9 / 15;
  EXPECT_NEAR(w.period_seconds, read + kernel + write, 1e-12);
  EXPECT_NEAR(w.first_slab_seconds, w.period_seconds, 1e-12);
  EXPECT_EQ(w.pace, kUnstagedPace);
  EXPECT_NEAR(w.seconds, 0.5 + mult / 1e9 + 15 * (read + kernel + write), 1e-12);
  const std::string text = describe_prediction(p, stages, w);
  EXPECT_NE(text.find("15 slab(s) at"), std::string::npos) << text;
  EXPECT_NE(text.find("memory.staging: none; read + kernel + write sets the pace"), std::string::npos) << text;
  EXPECT_EQ(text.find("fill and drain"), std::string::npos) << text;

  Plan d = date_plan(true);
  d.request.unstaged = true;
  Limits limits = host_limits(1.0, 100.0, 1.0);
  limits.h2d = {20.0, LinkSource::measured, false, "", "measured now"};
  limits.d2h = {20.0, LinkSource::measured, false, "", "measured now"};
  auto ds = predict(d, limits);
  ASSERT_EQ(ds.size(), 5u);
  const double n = static_cast<double>(d.slabs.size());
  WallPrediction dw = predict_wall(d, ds, FixedCost{0, "x"});
  EXPECT_NEAR(dw.period_seconds, (ds[0].seconds - mult / 1e9) / n + ds[4].seconds / n, 1e-12);
  EXPECT_EQ(dw.pace, kUnstagedDevicePace);
  limits.h2d.gb_per_s = 0.01;  // a slow link: the copies set the pace
  ds = predict(d, limits);
  dw = predict_wall(d, ds, FixedCost{0, "x"});
  EXPECT_NEAR(dw.period_seconds, ds[1].seconds / n, 1e-12);
  EXPECT_EQ(dw.pace, "h2d");
}

TEST(PredictWall, DepthOneIsEveryStageOneAfterAnother) {
  PlanRequest r = request(100, 4000, 5, 160000 + 1 * 7 * 160000 + 100);
  r.pipeline_depth = 1;
  const Plan p = make_plan(r);
  ASSERT_EQ(p.host_buffers, 1);
  const auto stages = predict(p, host_limits(1.0, 10.0, 0.5));
  const WallPrediction w = predict_wall(p, stages, FixedCost{0.1, "x"});
  EXPECT_NEAR(w.seconds, 0.1 + predicted_serial_seconds(stages), 1e-12);
  EXPECT_NE(describe_prediction(p, stages, w).find("pipeline_depth 1"), std::string::npos);
}

TEST(PredictWall, OneSlabHasNoOverlap) {
  const Plan p = make_plan(request(100, 4000, 5, std::uint64_t{1} << 30));
  ASSERT_EQ(p.slabs.size(), 1u);
  const auto stages = predict(p, host_limits(2.0, 20.0, 1.0));
  const WallPrediction w = predict_wall(p, stages, FixedCost{0.0, "x"});
  EXPECT_NEAR(w.seconds, predicted_serial_seconds(stages), 1e-12);
  EXPECT_EQ(describe_prediction(p, stages, w).find("more slab"), std::string::npos);
}

// Two buffers for three equally slow stages: a buffer's round trip (read,
// kernel, write) over two buffers, not one stage's time, sets the period.
TEST(PredictWall, TooFewBuffersForTheStagesSetThePace) {
  PlanRequest r = request(100, 4000, 5, 160000 + 2 * 7 * 160000 + 100);
  r.pipeline_depth = 2;
  const Plan p = make_plan(r);
  ASSERT_EQ(p.host_buffers, 2);
  const double data = 100.0 * 4000 * 5 * 8, mult = 4000.0 * 5 * 8;
  // Rates that make each stage's per-slab time equal.
  const double t = 1.0;  // seconds per stage, whole job
  Limits limits = host_limits(data / t / 1e9, (2 * data + 15 * mult) / t / 1e9, data / t / 1e9);
  const auto stages = predict(p, limits);
  const WallPrediction w = predict_wall(p, stages, FixedCost{});
  const double n = static_cast<double>(p.slabs.size());
  EXPECT_FALSE(w.fixed_known);
  EXPECT_EQ(w.pace, "buffers");
  EXPECT_NEAR(w.period_seconds, 3 * (t / n) / 2, 1e-9);
  const std::string text = describe_prediction(p, stages, w);
  EXPECT_NE(text.find("staging buffers set the pace"), std::string::npos) << text;
  EXPECT_NE(text.find("plus start-up and finish (not known"), std::string::npos) << text;
}

// With device copies the device ring (upload, kernel, download) can bind too.
TEST(PredictWall, DeviceCopiesCountEveryStage) {
  const Plan p = date_plan(true);
  Limits limits = host_limits(1.0, 100.0, 1.0);
  limits.h2d = {0.05, LinkSource::measured, false, "", "measured now"};
  limits.d2h = {0.05, LinkSource::measured, false, "", "measured now"};
  const auto stages = predict(p, limits);
  ASSERT_EQ(stages.size(), 5u);
  const WallPrediction w = predict_wall(p, stages, FixedCost{0, "x"});
  const double n = static_cast<double>(p.slabs.size());
  const double h2d = stages[1].seconds / n, kernel = stages[2].seconds / n, d2h = stages[3].seconds / n;
  EXPECT_NEAR(w.period_seconds, std::max(h2d, (h2d + kernel + d2h) / p.device_buffers), 1e-12);
}

TEST(PredictWall, NoRatesNoTime) {
  const Plan p = date_plan(false);
  const auto stages = predict(p, Limits{});
  const WallPrediction w = predict_wall(p, stages, FixedCost{1.0, "x"});
  EXPECT_LT(w.seconds, 0);
  EXPECT_EQ(w.unknown, (std::vector<std::string>{"read", "kernel", "write"}));
  const std::string text = describe_prediction(p, stages, w);
  EXPECT_NE(text.find("cannot predict the time: no rate known for read, kernel, write"), std::string::npos) << text;
  EXPECT_EQ(text.find("predicted wall 0"), std::string::npos) << text;
}

// Pieces follow the slabs from the first on, never cross a slab, and stop
// once max_bytes are covered.
TEST(ProbePieces, DateSlabsCutAlongTheChunkAxis) {
  const Plan p = date_plan(false);  // slabs of 7 dates, one date 160000 B
  const auto pieces = probe_pieces(p, 3 * 160000 + 5, 20 * 160000);
  std::uint64_t covered = 0;
  for (const Slab& piece : pieces) {
    EXPECT_EQ(piece.ids.size(), 4000);
    EXPECT_LE(piece.dates.size(), 3);
    const Slab& owner = p.slabs[static_cast<std::size_t>(piece.dates.begin / 7)];
    EXPECT_LE(piece.dates.end, owner.dates.end);  // within one slab
    covered += static_cast<std::uint64_t>(piece.elements()) * 8;
  }
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces[0].dates.begin, 0);
  // 7 = 3 + 3 + 1 per slab: 3 slabs are 21 dates, past 20 after the 9th piece.
  EXPECT_EQ(pieces.size(), 8u);
  EXPECT_GE(covered, 20u * 160000);
  EXPECT_EQ(pieces[2].dates.size(), 1);
}

TEST(ProbePieces, AStepLargerThanAPieceIsCutAcross) {
  const Plan p = date_plan(false);
  // One date is 4000 rows of 40 B; pieces of 1000 rows.
  const auto pieces = probe_pieces(p, 40000, 1u << 30);
  ASSERT_EQ(pieces.size(), 100u * 4);
  for (const Slab& piece : pieces) {
    EXPECT_EQ(piece.dates.size(), 1);
    EXPECT_EQ(piece.ids.size(), 1000);
  }
  EXPECT_EQ(pieces[1].ids.begin, 1000);
  EXPECT_EQ(pieces[4].dates.begin, 1);
}

TEST(ProbePieces, IdSlabs) {
  const Plan p = id_plan(false);  // 101 slabs of 10 ids, one id 200 x 5 x 8 = 8000 B
  const auto pieces = probe_pieces(p, 8000 * 4, 8000 * 1009);
  std::int64_t ids = 0;
  for (const Slab& piece : pieces) {
    EXPECT_EQ(piece.dates.size(), 200);
    EXPECT_LE(piece.ids.size(), 4);
    EXPECT_EQ(piece.ids.begin, ids);
    ids = piece.ids.end;
  }
  EXPECT_EQ(ids, 1009);  // the whole job when max_bytes covers it
}
