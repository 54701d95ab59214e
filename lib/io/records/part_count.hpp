// How many part files output.parts: auto gives a split output (io/records/output_parts.hpp),
// and how many writers it runs. Pure: resolve decides both before the plan.
#pragma once

#include <algorithm>
#include <cstdint>

namespace discount {

// On a memory-backed file system: one part per core, so that each writer
// has a file of its own (one file takes one write at a time: its inode
// lock). On a disk: two parts per core, each at least 256 MiB, since there
// each part's O_DIRECT writes queue at the device beside the others'.
// Either way at least 2 once the output reaches
// 256 MiB, and 64 in all; smaller outputs stay in one part. (The parts are
// cut to the slab count when the output is created.)
inline int auto_parts(std::uint64_t output_bytes, unsigned cores, bool memory_backed) {
  constexpr std::uint64_t kSplitFrom = std::uint64_t{256} << 20;
  if (output_bytes < kSplitFrom) return 1;
  const std::uint64_t most = std::min<std::uint64_t>(64, std::max<std::uint64_t>(2, (memory_backed ? 1 : 2) * cores));
  const std::uint64_t wanted = memory_backed ? most : output_bytes / kSplitFrom;
  return static_cast<int>(std::min(most, std::max<std::uint64_t>(2, wanted)));
}

// The rule auto_parts() applied, for the output line.
inline const char* auto_parts_rule(bool memory_backed) {
  return memory_backed ? "one per core on a memory-backed file system, a file for each writer"
                       : "on a disk two per core, each at least 256 MiB";
}

// Writer threads for `parts` parts: one per part, at most one per core and 16.
inline int split_writers(int parts, unsigned cores) {
  return std::max(1, std::min({parts, static_cast<int>(std::max(1u, cores)), 16}));
}

}  // namespace discount
