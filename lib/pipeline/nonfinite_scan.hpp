// input.nonfinite: error (docs/config.md): the scan for NaN and Inf in what
// a run reads, chosen once per run. It is on where the check is asked for
// and the input may hold such values (an integer dataset holds none); the
// stages then look at each piece as it lands (pipeline/stage_threads.hpp,
// pipeline/unstaged.hpp), and the multBy rows here.
#pragma once

#include <cstdint>
#include <string>

#include "common/range.hpp"
#include "io/input/finite.hpp"
#include "io/input/input.hpp"
#include "pipeline/stage_parts.hpp"
#include "resolve/resolve.hpp"

namespace discount::pipeline_detail {

class NonfiniteScan {
 public:
  // `nums`: the multBy rows' length (the plan's).
  NonfiniteScan(const PipelineSpec& spec, std::int64_t nums, const InputSource& input)
      : spec_(spec), nums_(nums), on_(spec.check_finite && input.may_hold_nonfinite()) {}

  bool on() const { return on_; }

  // multBy rows `ids` into `rows`, scanned when the scan is on.
  void read_multiplier(InputSource& input, Range ids, double* rows) const {
    input.read_multiplier(ids, rows);
    if (!on_) return;
    const std::int64_t n = ids.size() * nums_;
    const std::int64_t bad = find_nonfinite(rows, n);
    if (bad >= 0)
      nonfinite_error("input.multiplier", spec_.multiplier, rows[bad],
                      "id " + std::to_string(ids.begin + bad / nums_) + ", num " + std::to_string(bad % nums_));
  }

 private:
  const PipelineSpec& spec_;
  const std::int64_t nums_;
  const bool on_;
};

}  // namespace discount::pipeline_detail
