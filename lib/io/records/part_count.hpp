// How many part files output.parts: auto gives a split output (io/records/output_parts.hpp),
// and how many writers it runs. Pure: resolve decides both before the plan.
#pragma once

#include <algorithm>
#include <cstdint>

namespace discount {

// On a memory-backed file system: about one part per 2 GiB of output, for
// the staging ring, whose writers share the cores with its reader (more
// parts did not write faster, and slowed a compressed input's decoding);
// memory.staging: none takes one per core instead (resolve). On a disk: two
// parts per core, each at least 256 MiB, since there each part's O_DIRECT
// writes queue at the device beside the others'. Either way at least 2 once
// the output reaches 256 MiB, and 64 in all; smaller outputs stay in one
// part. (The parts are cut to the slab count when the output is created.)
inline int auto_parts(std::uint64_t output_bytes, unsigned cores, bool memory_backed) {
  constexpr std::uint64_t kPerPart = std::uint64_t{2} << 30, kSplitFrom = std::uint64_t{256} << 20;
  if (output_bytes < kSplitFrom) return 1;
  const std::uint64_t per_core = memory_backed ? 1 : 2;
  const std::uint64_t most = std::min<std::uint64_t>(64, std::max<std::uint64_t>(2, per_core * cores));
  const std::uint64_t wanted = memory_backed ? (output_bytes + kPerPart - 1) / kPerPart : output_bytes / kSplitFrom;
  return static_cast<int>(std::min(most, std::max<std::uint64_t>(2, wanted)));
}

// The rule auto_parts() applied, for the output line.
inline const char* auto_parts_rule(bool memory_backed) {
  return memory_backed ? "about one per 2 GiB on a memory-backed file system"
                       : "on a disk two per core, each at least 256 MiB";
}

// memory.staging: none on a memory-backed file system takes one part per core.
inline constexpr const char* kPartsPerCoreRule =
    "one per core, so that each thread of memory.staging: none writes its own";

// Writer threads for `parts` parts: one per part, at most one per core and 16.
inline int split_writers(int parts, unsigned cores) {
  return std::max(1, std::min({parts, static_cast<int>(std::max(1u, cores)), 16}));
}

}  // namespace discount
