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

// Slabs must tile the selection exactly once, in order.
void expect_tiles(const Plan& plan) {
  const auto& r = plan.request;
  std::int64_t next = 0, elements = 0;
  for (std::size_t s = 0; s < plan.slabs.size(); ++s) {
    const Slab& slab = plan.slabs[s];
    EXPECT_EQ(slab.index, static_cast<int>(s));
    const Range along = r.chunk_axis == Axis::date ? slab.dates : slab.ids;
    const Range across = r.chunk_axis == Axis::date ? slab.ids : slab.dates;
    EXPECT_EQ(along.begin, next);
    EXPECT_GT(along.size(), 0);
    EXPECT_LE(along.size(), plan.slab_extent);
    EXPECT_EQ(across.size(), r.chunk_axis == Axis::date ? r.ids : r.dates);
    next = along.end;
    elements += slab.elements();
  }
  EXPECT_EQ(next, r.chunk_axis == Axis::date ? r.dates : r.ids);
  EXPECT_EQ(static_cast<std::uint64_t>(elements), plan.total_elements());
}

}  // namespace

TEST(Plan, EverythingFitsInOneSlab) {
  Plan p = make_plan(request(100, 4000, 5, std::uint64_t{1} << 30));
  ASSERT_EQ(p.slabs.size(), 1u);
  EXPECT_EQ(p.slab_extent, 100);
  EXPECT_EQ(p.slab_bytes, 100u * 4000 * 5 * 8);
  EXPECT_EQ(p.mult_bytes, 4000u * 5 * 8);
  EXPECT_FALSE(p.mult_per_slab);
  EXPECT_EQ(p.device_buffers, 0);
  expect_tiles(p);
}

TEST(Plan, BudgetCutsDateSlabsWithLastPartial) {
  // One date = 4000*5*8 = 160000 B; multBy resident 160000 B; 3 buffers.
  const std::uint64_t budget = 160000 + 3 * 7 * 160000 + 100;
  Plan p = make_plan(request(100, 4000, 5, budget));
  EXPECT_EQ(p.slab_extent, 7);
  ASSERT_EQ(p.slabs.size(), 15u);  // 14 x 7 + 2
  EXPECT_EQ(p.slabs.back().dates.size(), 2);
  EXPECT_LE(p.host_bytes, budget);
  expect_tiles(p);
}

TEST(Plan, IdChunksCarryTheirMultBy) {
  PlanRequest r = request(200, 1009, 5, 0);
  r.chunk_axis = Axis::id;
  // One id: 200*5*8 discount + 5*8 multBy = 8040 B; 3 buffers of 10 ids.
  r.host_budget = 3 * 10 * 8040 + 7;
  Plan p = make_plan(r);
  EXPECT_TRUE(p.mult_per_slab);
  EXPECT_EQ(p.slab_extent, 10);
  EXPECT_EQ(p.slabs.size(), 101u);
  EXPECT_EQ(p.slabs.back().ids.size(), 9);
  EXPECT_EQ(p.slab_mult_bytes, 10u * 5 * 8);
  EXPECT_LE(p.host_bytes, r.host_budget);
  expect_tiles(p);
}

TEST(Plan, DeviceBudgetLimitsSlabsWhenCopying) {
  PlanRequest r = request(200, 1000, 5, std::uint64_t{1} << 30);
  r.device_copies = true;
  r.device_budget = 40000 + 3 * 4 * 40000;  // multBy + 3 device buffers of 4 dates
  Plan p = make_plan(r);
  EXPECT_EQ(p.device_buffers, 3);
  EXPECT_EQ(p.slab_extent, 4);
  EXPECT_EQ(p.slabs.size(), 50u);
  EXPECT_LE(p.device_bytes, r.device_budget);
  expect_tiles(p);
}

TEST(Plan, StagingComesOutOfTheHostBudget) {
  // 100 dates of 4000 x 5 doubles (160,000 B each), 3 buffers, multBy 160,000 B resident.
  const std::uint64_t budget = 160000 + 3 * 10 * 160000 + 65536;
  PlanRequest r = request(100, 4000, 5, budget);
  EXPECT_EQ(make_plan(r).slab_extent, 10);
  r.staging_bytes = 65537;  // one byte more than the slack: a date per buffer less
  const Plan p = make_plan(r);
  EXPECT_EQ(p.slab_extent, 9);
  EXPECT_EQ(p.host_bytes, 65537 + 160000 + 3 * 9 * 160000u);
  EXPECT_NE(p.describe().find("O_DIRECT staging"), std::string::npos);
  r.staging_bytes = budget;
  try {
    make_plan(r);
    FAIL() << "staging that fills the budget must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    EXPECT_NE(std::string(e.what()).find("O_DIRECT staging"), std::string::npos);
  }
}

TEST(Plan, Hdf5ReadingComesOutOfTheHostBudget) {
  const std::uint64_t budget = 160000 + 3 * 10 * 160000 + 65536;
  PlanRequest r = request(100, 4000, 5, budget);
  r.staging_bytes = 65536;
  r.read_bytes = 1;  // one byte past the slack: a date per buffer less
  const Plan p = make_plan(r);
  EXPECT_EQ(p.slab_extent, 9);
  EXPECT_EQ(p.host_bytes, 65536 + 1 + 160000 + 3 * 9 * 160000u);
  EXPECT_NE(p.describe().find("HDF5 reading"), std::string::npos) << p.describe();
  r.read_bytes = budget;
  try {
    make_plan(r);
    FAIL() << "reading memory that fills the budget must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    EXPECT_NE(std::string(e.what()).find("HDF5 reading"), std::string::npos) << e.what();
  }
}

TEST(Plan, MaxSlabCapsTheSlab) {
  PlanRequest r = request(200, 1000, 5, std::uint64_t{1} << 30);
  r.max_slab = 3 * 40000;
  Plan p = make_plan(r);
  EXPECT_EQ(p.slab_extent, 3);
  EXPECT_EQ(p.slabs.size(), 67u);
  expect_tiles(p);
}

TEST(Plan, OddShapesTile) {
  for (std::int64_t dates : {1, 2, 7, 13}) {
    for (std::int64_t ids : {1, 3, 1009}) {
      for (Axis axis : {Axis::date, Axis::id}) {
        PlanRequest r = request(dates, ids, 3, 0);
        r.chunk_axis = axis;
        r.pipeline_depth = 2;
        r.host_budget = 5000;
        try {
          expect_tiles(make_plan(r));
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ExitCode::config);  // too small for this shape is fine, crashing is not
        }
      }
    }
  }
}

TEST(Plan, BudgetSmallerThanOneSlabIsAConfigError) {
  try {
    make_plan(request(200, 10000000, 5, std::uint64_t{512} << 20));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    const std::string m = e.what();
    EXPECT_NE(m.find("memory.host_budget"), std::string::npos) << m;
    EXPECT_NE(m.find("too small"), std::string::npos) << m;
  }
  PlanRequest r = request(200, 10000000, 5, std::uint64_t{64} << 30);
  r.device_copies = true;
  r.device_budget = std::uint64_t{1} << 30;
  EXPECT_THROW(make_plan(r), Error);
}

TEST(Plan, FullScaleFitsSixteenGiBOfDevice) {
  PlanRequest r = request(200, 10000000, 5, std::uint64_t{32} << 30);
  r.device_copies = true;
  r.device_budget = std::uint64_t{16} << 30;
  r.max_slab = std::uint64_t{2} << 30;
  Plan p = make_plan(r);
  EXPECT_LE(p.device_bytes, r.device_budget);
  EXPECT_LE(p.host_bytes, r.host_budget);
  EXPECT_EQ(p.input_bytes(), 80000000000u + 400000000u);
  expect_tiles(p);
}

TEST(Plan, BudgetsAreHeldAgainstTheMachine) {
  const std::uint64_t GiB = std::uint64_t{1} << 30;
  // A small job under a huge budget: allowed, with one warning line.
  Plan small = make_plan(request(7, 1013, 5, 1024 * GiB));
  EXPECT_LT(small.host_bytes, GiB);
  const std::string warning = check_machine_memory(small, {24 * GiB, 0});
  EXPECT_NE(warning.find("memory.host_budget = 1 TiB"), std::string::npos) << warning;
  EXPECT_EQ(warning.find('\n'), std::string::npos);
  // The same job within what is available, or on a machine that says nothing.
  EXPECT_EQ(check_machine_memory(make_plan(request(7, 1013, 5, GiB)), {24 * GiB, 0}), "");
  EXPECT_EQ(check_machine_memory(small, {0, 0}), "");
  // A plan that allocates more than is available: refused.
  Plan big = make_plan(request(200, 10'000'000, 5, 1024 * GiB));
  ASSERT_GT(big.host_bytes, 24 * GiB);
  try {
    check_machine_memory(big, {24 * GiB, 0});
    FAIL() << "a plan of " << big.host_bytes << " bytes passed on 24 GiB";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    EXPECT_NE(std::string(e.what()).find("memory.host_budget"), std::string::npos) << e.what();
  }
  // The device side, when the kernel runs in device memory.
  auto on_device = request(200, 10'000'000, 5, 512 * GiB);
  on_device.device_copies = true;
  on_device.device_budget = 512 * GiB;
  Plan device = make_plan(on_device);
  ASSERT_GT(device.device_bytes, 40 * GiB);
  try {
    check_machine_memory(device, {1024 * GiB, 40 * GiB});
    FAIL() << "a device plan of " << device.device_bytes << " bytes passed on 40 GiB free";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("memory.device_budget"), std::string::npos) << e.what();
  }
  auto small_device = request(7, 1013, 5, GiB);
  small_device.device_copies = true;
  small_device.device_budget = 512 * GiB;
  EXPECT_NE(check_machine_memory(make_plan(small_device), {24 * GiB, 80 * GiB}).find("memory.device_budget"),
            std::string::npos);
}

// chunk_axis: auto asks minimal_slab_shortfall whether a date fits; it must
// agree with make_plan's refusal at every budget, both axes, host and device
// sides, with and without staging.
TEST(Plan, ShortfallAgreesWithMakePlanAtEveryBoundary) {
  for (Axis axis : {Axis::date, Axis::id})
    for (bool device : {false, true})
      for (std::uint64_t staging : {std::uint64_t{0}, std::uint64_t{4096}}) {
        PlanRequest r = request(7, 1013, 5, 0);
        r.chunk_axis = axis;
        r.device_copies = device;
        r.staging_bytes = staging;
        r.pipeline_depth = device ? 5 : 2;  // 5 host buffers, 4 device buffers
        // One date: 1013 x 5 x 8 = 40520 B, multBy resident 40520 B; one id: 7 x 5 x 8 + 5 x 8 = 320 B.
        const std::uint64_t unit = axis == Axis::date ? 40520 : 320;
        const std::uint64_t resident = axis == Axis::date ? 40520 : 0;
        const std::uint64_t host_need = staging + resident + r.pipeline_depth * unit;
        const std::uint64_t device_need = resident + 4 * unit;
        for (std::uint64_t host : {host_need - 1, host_need, host_need + 1}) {
          for (std::uint64_t dev : {device_need - 1, device_need}) {
            r.host_budget = host;
            r.device_budget = dev;
            const std::string shortfall = minimal_slab_shortfall(r);
            bool refused = false;
            try {
              make_plan(r);
            } catch (const Error& e) {
              refused = true;
              EXPECT_EQ(e.code(), ExitCode::config);
            }
            const bool fits = host >= host_need && (!device || dev >= device_need);
            EXPECT_EQ(refused, !fits) << axis_name(axis) << " host " << host << " device " << dev;
            EXPECT_EQ(shortfall.empty(), fits) << shortfall;
            if (!fits) {
              EXPECT_EQ(shortfall.rfind(std::string("one ") + axis_name(axis) + " needs ", 0), 0u) << shortfall;
            }
          }
        }
      }
}

TEST(Plan, EmptyDimensionIsDataError) {
  try {
    make_plan(request(0, 10, 5, 1 << 20));
    FAIL() << "no error";
  } catch (const Error& e) { EXPECT_EQ(e.code(), ExitCode::data_invalid); }
}

TEST(Plan, DescribeNamesTheNumbers) {
  PlanRequest r = request(100, 4000, 5, std::uint64_t{1} << 20);
  r.device_copies = true;
  r.device_budget = std::uint64_t{1} << 20;
  const std::string text = make_plan(r).describe();
  EXPECT_NE(text.find("dates=100 ids=4000 nums=5"), std::string::npos) << text;
  EXPECT_NE(text.find("slab(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("H2D"), std::string::npos) << text;
}
