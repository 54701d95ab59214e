// The streaming pipeline in one process: results equal the in-core answer
// for every plan shape; repeated runs give the same bits and keep the same
// memory (the original question's "slower every run" and leak).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#if defined(__linux__)
#include <malloc.h>
#endif

#include "common/error.hpp"
#include "backend/gpu_runtime.hpp"
#include "io/input/input.hpp"
#include "io/lists/open_input.hpp"
#include "io/input/memory_arrays.hpp"
#include "io/output/memory_output.hpp"
#include "io/output/output.hpp"
#include "io/input/synthetic.hpp"
#include "support/kokkos_env.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/staging_pool.hpp"
#include "plan/plan.hpp"
#include "ranks/ranks.hpp"
#include "resolve/resolve.hpp"

using namespace discount;

namespace {

// Wrapping sums of cv's bit patterns per date, computed with a plain loop.
std::vector<std::uint64_t> expected_bits(const SyntheticSource& s) {
  std::vector<std::uint64_t> bits(static_cast<std::size_t>(s.dates), 0);
  const auto mk = synthetic::key(s.seed, synthetic::multiplier), dk = synthetic::key(s.seed, synthetic::discount);
  for (std::int64_t d = 0; d < s.dates; ++d)
    for (std::int64_t i = 0; i < s.ids; ++i)
      for (std::int64_t k = 0; k < s.nums; ++k) {
        const double v = synthetic::value(mk, i * s.nums + k) * synthetic::value(dk, (d * s.ids + i) * s.nums + k);
        std::uint64_t b;
        std::memcpy(&b, &v, 8);
        bits[static_cast<std::size_t>(d)] += b;
      }
  return bits;
}

struct Result {
  std::vector<std::uint64_t> bits;
  RunReport report;
};

// The job exactly as the app makes it: facts, resolve(), make_plan(); the
// budgets are set in the config as fixed sizes.
struct Prepared {
  std::unique_ptr<InputSource> input;
  JobSpec spec;
  Plan plan;
};

Prepared prepare_synthetic(const SyntheticSource& source, Config config, std::uint64_t host_budget) {
  config.input.synthetic = source;
  config.output.mode = OutputMode::checksum;
  config.memory.host_budget = MemorySize{false, 0.0, host_budget};
  config.memory.device_budget = MemorySize{false, 0.0, host_budget};
  Prepared p;
  p.input = open_input(config.input);
  SystemFacts facts;
  facts.input = input_facts(*p.input);
  facts.separate_device_memory = needs_device_copies(Space::device);
  p.spec = resolve(config, facts);
  p.plan = make_plan(p.spec.plan);
  return p;
}

// run_pipeline on one job, as run_command hands it over.
RunReport run_one(const JobSpec& spec, const Plan& plan, InputSource& input, OutputSink& sink,
                  const std::atomic<int>* stop = nullptr) {
  PipelineJob job{&spec.pipeline, &plan, &input, &sink, stop, {}};
  RunReport report;
  run_pipeline(job, report);
  return report;
}

Result run_prepared(Prepared& p, const std::atomic<int>* stop = nullptr) {
  const PlanRequest& r = p.plan.request;
  ChecksumOutput sink(p.input->axes(), r.dates, r.ids, r.nums);
  Result result;
  result.report = run_one(p.spec, p.plan, *p.input, sink, stop);
  result.bits = sink.date_bits();
  return result;
}

Result run_synthetic(const SyntheticSource& source, Config config, std::uint64_t host_budget,
                     const std::atomic<int>* stop = nullptr) {
  Prepared p = prepare_synthetic(source, std::move(config), host_budget);
  return run_prepared(p, stop);
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// glibc's counts (0 elsewhere): bytes malloc took from the kernel (heap and
// mmapped chunks), and bytes of those handed out and not yet freed.
std::uint64_t malloc_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return m.arena + m.hblkhd;
#else
  return 0;
#endif
}

std::uint64_t malloc_in_use_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#else
  return 0;
#endif
}

}  // namespace

TEST(Pipeline, EveryPlanShapeGivesTheInCoreBits) {
  const SyntheticSource source{11, 1009, 3, 7};
  const auto expected = expected_bits(source);
  const std::uint64_t one_date = 1009 * 3 * 8;
  for (Space space : {Space::device, Space::host})
    for (Axis axis : {Axis::date, Axis::id})
      for (int depth : {1, 2, 3})
        for (std::uint64_t budget : {std::uint64_t{64} << 20, one_date * 6, one_date * 2 + 100000}) {
          Config config;
          config.compute.space = space;
          config.memory.chunk_axis = axis;
          config.memory.pipeline_depth = depth;
          Result r = run_synthetic(source, config, budget);
          EXPECT_EQ(r.bits, expected) << "axis " << axis_name(axis) << " depth " << depth << " budget " << budget;
          EXPECT_FALSE(r.report.interrupted);
          EXPECT_EQ(r.report.slabs_run, r.report.slabs_total);
        }
}

TEST(Pipeline, EverySlicingAndTheBlasKernel) {
  const SyntheticSource source{5, 2003, 5, 3};
  const auto expected = expected_bits(source);
  const std::vector<std::vector<Axis>> slicings{{Axis::date},
                                                {Axis::id},
                                                {Axis::num},
                                                {Axis::date, Axis::id},
                                                {Axis::id, Axis::num},
                                                {Axis::date, Axis::num},
                                                {Axis::date, Axis::id, Axis::num}};
  for (const auto& dims : slicings) {
    Config config;
    config.compute.parallel_dims = dims;
    EXPECT_EQ(run_synthetic(source, config, 2 * 2003 * 5 * 8 * 3 + 2003 * 5 * 8).bits, expected);
  }
  Config blas;
  blas.compute.kernel = KernelKind::blas;
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
  EXPECT_EQ(run_synthetic(source, blas, 1 << 20).bits, expected);
#else
  // Refused before the pipeline allocates or reads anything.
  EXPECT_THROW(run_synthetic(source, blas, 1 << 20), Error);
#endif
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST(Pipeline, RepeatedRunsGiveTheSameBitsAndKeepTheSameMemory) {
  const SyntheticSource source{24, 50021, 5, 9};
  Config config;
  const std::uint64_t budget = std::uint64_t{16} << 20;
  // The first run lets Kokkos and the I/O threads set up what they keep.
  const auto first = run_synthetic(source, config, budget);
  const std::uint64_t baseline = resident_bytes();
  const std::uint64_t heap_baseline = malloc_bytes(), heap_in_use_baseline = malloc_in_use_bytes();
  for (int run = 0; run < 8; ++run) {
    const auto again = run_synthetic(source, config, budget);
    EXPECT_EQ(again.bits, first.bits);
  }
  if (kAddressSanitizer) GTEST_SKIP() << "bits checked; resident size is not meaningful under AddressSanitizer";
  const std::uint64_t after = resident_bytes();
  // Every run maps ~16 MiB of staging buffers: a leak, or freed buffers the
  // allocator keeps (glibc did under Kokkos 4, see backend/host_pages.hpp),
  // would add that per run.
  EXPECT_LT(after, baseline + (std::uint64_t{8} << 20)) << "resident grew from " << baseline << " to " << after;
  // The allocator's own view, where it has one: what is allocated and not freed
  // (a leak), and what its heap holds in all (freed memory kept from the kernel).
  if (heap_baseline > 0) {
    EXPECT_LT(malloc_in_use_bytes(), heap_in_use_baseline + (std::uint64_t{1} << 20));
    EXPECT_LT(malloc_bytes(), heap_baseline + (std::uint64_t{4} << 20)) << "malloc holds freed memory between runs";
  }
}

// With keeping on (the Python module), the second run takes the first run's
// staging ring instead of making one, and computes the same bits into it.
TEST(Pipeline, AKeptStagingRingServesTheNextRun) {
  const SyntheticSource source{5, 450001, 5, 3};  // 18 MB a date: ring blocks large enough to keep
  const auto expected = expected_bits(source);
  const std::uint64_t budget = std::uint64_t{96} << 20;
  for (Space space : {Space::host, Space::device}) {
    Config config;
    config.compute.space = space;
    config.memory.chunk_axis = Axis::date;
    release_kept_staging();
    keep_staging(true);
    const auto first = run_synthetic(source, config, budget);
    const std::uint64_t kept = kept_staging_bytes();
    const auto second = run_synthetic(source, config, budget);
    keep_staging(false);  // frees them: other tests run without keeping
    EXPECT_EQ(first.bits, expected);
    EXPECT_EQ(second.bits, expected);
    ASSERT_GT(first.report.staging_bytes, 0u);
    EXPECT_EQ(first.report.staging_reused_bytes, 0u);
    EXPECT_GE(kept, first.report.staging_bytes);
    EXPECT_EQ(second.report.staging_reused_bytes, second.report.staging_bytes);
    EXPECT_EQ(kept_staging_bytes(), 0u);
    const auto third = run_synthetic(source, config, budget);  // keeping off: a new ring
    EXPECT_EQ(third.bits, expected);
    EXPECT_EQ(third.report.staging_reused_bytes, 0u);
    EXPECT_EQ(kept_staging_bytes(), 0u);
  }
}

// Arrays in memory under memory.staging: none (the Python module's multiply
// on a GPU): the threads share out the pieces of every slab, slabs of two
// pieces and more, in each axis order and with float32 input; every element
// equals a plain loop's product and nothing else of `out` is touched.
// An array page-locked for the GPU's copies for the scope of a test (on a
// GPU build; elsewhere nothing to do).
struct PinnedForTest {
  explicit PinnedForTest(const ArrayRef& a)
      : data(a.data && gpu::register_host(a.data,
                                          static_cast<std::size_t>(a.elements()) * (a.type == ElementType::f64 ? 8 : 4))
                 ? a.data
                 : nullptr) {}
  ~PinnedForTest() {
    if (data) gpu::unregister_host(data);
  }
  PinnedForTest(const PinnedForTest&) = delete;
  PinnedForTest& operator=(const PinnedForTest&) = delete;
  void* data;
};

TEST(Pipeline, ArraysInMemorySharePiecesAmongThreads) {
  const std::int64_t dates = 5, ids = 50021, nums = 5;  // 2 MB a date: two 1 MiB pieces and a bit
  std::vector<double> mult(static_cast<std::size_t>(ids * nums));
  for (std::size_t e = 0; e < mult.size(); ++e) mult[e] = 0.5 + static_cast<double>((e * 7919) % 1009) / 1013.0;
  using Axes = std::array<Axis, 3>;
  for (const Axes& axes : {Axes{Axis::date, Axis::id, Axis::num}, Axes{Axis::id, Axis::date, Axis::num},
                           Axes{Axis::num, Axis::date, Axis::id}})
    for (bool single : {false, true})
      for (bool pinned : {false, true}) {
        std::array<std::int64_t, 3> shape{};
        for (int j = 0; j < 3; ++j)
          shape[static_cast<std::size_t>(j)] = axes[static_cast<std::size_t>(j)] == Axis::date ? dates
                                               : axes[static_cast<std::size_t>(j)] == Axis::id ? ids
                                                                                               : nums;
        const std::size_t n = static_cast<std::size_t>(dates * ids * nums);
        std::vector<double> disc64(n);
        std::vector<float> disc32(n);
        for (std::size_t e = 0; e < n; ++e) {
          disc32[e] = 0.25f + static_cast<float>((e * 104729) % 4093) / 4096.0f;
          disc64[e] = 0.75 + static_cast<double>((e * 15485863) % 8191) / 8192.0;
        }
        std::vector<double> out(n, std::nan(""));
        const std::array<std::int64_t, 3> strides{shape[1] * shape[2], shape[2], 1};
        const ArrayRef m{mult.data(), ElementType::f64, 2, {ids, nums, 0}, {nums, 1, 0}, "mult"};
        ArrayRef d{single ? static_cast<void*>(disc32.data()) : static_cast<void*>(disc64.data()),
                   single ? ElementType::f32 : ElementType::f64,
                   3,
                   shape,
                   strides,
                   "disc"};
        ArrayRef o{out.data(), ElementType::f64, 3, shape, strides, "out"};
        // Pinned in place: a GPU copies contiguous float64 pieces from disc and
        // into out where they lie (float32 disc: only out's side).
        const PinnedForTest pin_disc(pinned ? d : ArrayRef{}), pin_out(pinned ? o : ArrayRef{});
        d.pinned = o.pinned = pinned;
        MemoryInput input(m, d, axes);
        Config config;
        config.source_path = "test";
        config.input.axes = axes;
        config.input.nonfinite = NonFinite::propagate;
        config.output.mode = OutputMode::checksum;
        config.memory.staging = Staging::none;
        config.memory.chunk_axis = Axis::date;
        config.memory.host_budget = MemorySize{false, 0.0, std::uint64_t{64} << 20};
        config.memory.device_budget = MemorySize{false, 0.0, std::uint64_t{64} << 20};
        config.memory.max_slab = MemorySize{false, 0.0, std::uint64_t{2} << 20};  // one date a slab
        SystemFacts facts;
        facts.input = input_facts(input);
        facts.separate_device_memory = needs_device_copies(Space::device);
        facts.output_piece_threads = 3;
        const JobSpec spec = resolve(config, facts);
        ASSERT_EQ(spec.pipeline.staging, Staging::none);
        const Plan plan = make_plan(spec.plan);
        MemoryOutput sink(o, input.shape(), axes);
        const RunReport report = run_one(spec, plan, input, sink);
        EXPECT_EQ(report.slabs_run, static_cast<int>(dates));
        EXPECT_FALSE(report.interrupted);
        std::int64_t wrong = 0;
        for (std::int64_t a = 0; a < shape[0]; ++a)
          for (std::int64_t b = 0; b < shape[1]; ++b)
            for (std::int64_t c = 0; c < shape[2]; ++c) {
              std::int64_t at[3] = {a, b, c}, id = 0, num = 0;
              for (int j = 0; j < 3; ++j) {
                if (axes[static_cast<std::size_t>(j)] == Axis::id) id = at[j];
                if (axes[static_cast<std::size_t>(j)] == Axis::num) num = at[j];
              }
              const auto e = static_cast<std::size_t>((a * shape[1] + b) * shape[2] + c);
              const double in = single ? static_cast<double>(disc32[e]) : disc64[e];
              wrong += out[e] != mult[static_cast<std::size_t>(id * nums + num)] * in;
            }
        EXPECT_EQ(wrong, 0) << axis_name(axes[0]) << "," << axis_name(axes[1]) << "," << axis_name(axes[2])
                            << (single ? " float32" : " float64") << (pinned ? ", pinned in place" : "");
      }
}

TEST(Pipeline, AStopRequestBeforeTheFirstSlabRunsNothing) {
  const SyntheticSource source{9, 101, 5, 1};
  std::atomic<int> stop{15};
  Config config;
  const auto r = run_synthetic(source, config, 101 * 5 * 8 * 3 + 101 * 5 * 8, &stop);
  EXPECT_TRUE(r.report.interrupted);
  EXPECT_EQ(r.report.slabs_run, 0);
  EXPECT_EQ(r.report.slabs_total, 9);  // one date per slab: three buffers fill the budget
}

// The plan's predicted bytes per stage are the pipeline's counted bytes, on
// jobs of odd sizes with either chunk axis, several depths and budgets, both
// spaces (device copies where the build has a separate device memory), and
// an id selection that is not the whole input.
TEST(Pipeline, PredictedBytesAreCountedBytes) {
  struct Case {
    SyntheticSource source;
    Axis chunk_axis;
    int depth;
    std::uint64_t budget;
  };
  const std::vector<Case> cases{
      {{11, 1009, 3, 7}, Axis::date, 3, 1009 * 3 * 8 * 5},       // several date slabs, the last one short
      {{7, 2003, 5, 2}, Axis::id, 2, 7 * 5 * 8 * 2 * 300},       // id slabs carry their multBy rows
      {{5, 301, 7, 3}, Axis::date, 1, std::uint64_t{64} << 20},  // one slab
      {{13, 97, 1, 4}, Axis::id, 4, 13 * 8 * 4 * 10 + 4096},     // nums 1, id slabs of 10
  };
  for (const auto& c : cases)
    for (Space space : {Space::device, Space::host}) {
      Config config;
      config.compute.space = space;
      config.memory.chunk_axis = c.chunk_axis;
      config.memory.pipeline_depth = c.depth;
      config.input.ids = Range{1, c.source.ids};  // the selection, not the whole input
      Prepared p = prepare_synthetic(c.source, config, c.budget);
      ASSERT_GT(p.plan.slabs.size(), 0u);
      const auto predicted = predict(p.plan, Limits{});
      const Result r = run_prepared(p);
      ASSERT_EQ(r.report.stages.size(), predicted.size());
      const std::string where = std::string(axis_name(c.chunk_axis)) + " slabs, " +
                                std::to_string(p.plan.slabs.size()) + " of them, " +
                                (p.plan.request.device_copies ? "device copies" : "no copies");
      for (std::size_t s = 0; s < predicted.size(); ++s) {
        EXPECT_EQ(r.report.stages[s].name, predicted[s].stage) << where;
        EXPECT_EQ(r.report.stages[s].bytes, predicted[s].bytes) << r.report.stages[s].name << ", " << where;
        EXPECT_EQ(r.report.stages[s].slabs, static_cast<int>(p.plan.slabs.size())) << where;
      }
      EXPECT_EQ(r.report.input_bytes, p.plan.input_bytes()) << where;
      EXPECT_EQ(r.report.output_bytes, p.plan.output_bytes()) << where;
    }
}

// Under MPI each rank runs a contiguous share of the slabs still to do;
// together the shares are exactly those slabs, in order, sizes within one.
TEST(RankShare, ContiguousCoverEverySlabOnce) {
  for (int n : {0, 1, 2, 7, 10, 101}) {
    std::vector<int> pending(n);
    for (int j = 0; j < n; ++j) pending[j] = 3 * j + 1;  // like slabs left after a resume
    for (int ranks : {1, 2, 3, 4, 16}) {
      std::vector<int> joined;
      std::size_t smallest = pending.size(), largest = 0;
      for (int rank = 0; rank < ranks; ++rank) {
        const auto share = discount::rank_share(pending, rank, ranks);
        joined.insert(joined.end(), share.begin(), share.end());
        smallest = std::min(smallest, share.size());
        largest = std::max(largest, share.size());
      }
      EXPECT_EQ(joined, pending) << n << " slabs over " << ranks << " ranks";
      EXPECT_LE(largest - smallest, 1u) << n << " slabs over " << ranks << " ranks";
    }
  }
}
