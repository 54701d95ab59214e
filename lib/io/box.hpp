// A box (hyperslab) of a row-major 3-D array, split into the contiguous runs
// that positional reads and writes move. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace discount {

struct Run {
  std::int64_t offset;  // elements from the array's start
  std::int64_t length;  // elements
};

// Runs of the box [start, start+count) in an array of extents `dims`, in the
// order a row-major buffer of shape `count` holds them. Trailing dimensions the
// box spans fully are merged into one run.
inline std::vector<Run> box_runs(const std::array<std::int64_t, 3>& dims, const std::array<std::int64_t, 3>& start,
                                 const std::array<std::int64_t, 3>& count) {
  std::vector<Run> runs;
  if (count[0] <= 0 || count[1] <= 0 || count[2] <= 0) return runs;
  const bool full2 = count[2] == dims[2];
  const bool full12 = full2 && count[1] == dims[1];
  if (full12) {
    runs.push_back({start[0] * dims[1] * dims[2], count[0] * dims[1] * dims[2]});
  } else if (full2) {
    for (std::int64_t a = 0; a < count[0]; ++a)
      runs.push_back({((start[0] + a) * dims[1] + start[1]) * dims[2], count[1] * dims[2]});
  } else {
    for (std::int64_t a = 0; a < count[0]; ++a)
      for (std::int64_t b = 0; b < count[1]; ++b)
        runs.push_back({((start[0] + a) * dims[1] + start[1] + b) * dims[2] + start[2], count[2]});
  }
  return runs;
}

}  // namespace discount
