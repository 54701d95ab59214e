// A plan request for the plan tests: the shape and host budget, no slab cap.
#pragma once

#include <cstdint>

#include "plan/plan.hpp"

namespace discount::test_support {

inline PlanRequest request(std::int64_t dates, std::int64_t ids, std::int64_t nums, std::uint64_t host_budget) {
  PlanRequest r;
  r.dates = dates;
  r.ids = ids;
  r.nums = nums;
  r.host_budget = host_budget;
  r.max_slab = std::uint64_t{1} << 40;
  return r;
}

}  // namespace discount::test_support
