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

// The runs that hold elements [begin, end) of the packed buffer of box_runs,
// in the same order: the part of box_runs' list that covers them, its first
// and last runs cut to the range. Its lengths add up to end - begin.
inline std::vector<Run> box_range_runs(const std::array<std::int64_t, 3>& dims,
                                       const std::array<std::int64_t, 3>& start,
                                       const std::array<std::int64_t, 3>& count, std::int64_t begin, std::int64_t end) {
  std::vector<Run> runs;
  if (count[0] <= 0 || count[1] <= 0 || count[2] <= 0 || begin >= end) return runs;
  // Elements per run of box_runs, and the array offset of run r's start.
  const bool full2 = count[2] == dims[2];
  const bool full12 = full2 && count[1] == dims[1];
  const std::int64_t run_length = full12 ? count[0] * dims[1] * dims[2] : full2 ? count[1] * dims[2] : count[2];
  auto run_start = [&](std::int64_t r) {
    if (full12) return start[0] * dims[1] * dims[2];
    if (full2) return ((start[0] + r) * dims[1] + start[1]) * dims[2];
    const std::int64_t a = r / count[1], b = r % count[1];
    return ((start[0] + a) * dims[1] + start[1] + b) * dims[2] + start[2];
  };
  while (begin < end) {
    const std::int64_t r = begin / run_length, column = begin % run_length;
    const std::int64_t n = std::min(end - begin, run_length - column);
    runs.push_back({run_start(r) + column, n});
    begin += n;
  }
  return runs;
}

}  // namespace discount
