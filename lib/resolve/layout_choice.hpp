// output.layout: auto, the rule. Pure: the caller measures the facts (is the
// output's folder memory-backed, which layout an earlier run of this output
// used) and this decides, with the one line `plan` and the run's header print.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/config.hpp"

namespace discount {

// What split gained over single in same-call measurements (write-bound jobs):
// 20 GB on the H200 node's /dev/shm (4.93 s against 8.25 s), and 2 GB made
// durable on the development VM's disk (2.45 s against 2.75 s).
constexpr double kSplitGainMemoryBacked = 1.67;
constexpr double kSplitGainDisk = 1.12;

struct LayoutChoice {
  OutputLayout layout = OutputLayout::single;  // never automatic
  std::string reason;                          // e.g. "auto: a memory-backed file system, ..."
};

struct LayoutFacts {
  std::uint64_t output_bytes = 0;  // cv as stored
  unsigned cores = 2;              // what auto_parts() counts (about twice the writer threads)
  bool memory_backed = false;      // the output's folder is on tmpfs/ramfs
  // The layout an earlier run of this output used (empty: none, or restart),
  // and where it was found ("the existing partial").
  std::optional<OutputLayout> recorded;
  std::string recorded_in;
  // output.compression is on: it compresses the split layout's finished
  // parts, so auto takes split (and resolve refuses single).
  bool compressed = false;
};

// `auto`: an earlier run's layout when there is one (a resume never changes
// the output's files); else split on a memory-backed file system when the
// output makes two parts or more (io/records/part_count.hpp's auto_parts: 256 MiB
// and up), where separate files write in parallel (20 GB: 4.9 s split
// against 8.2 s single on the H200 node's /dev/shm); else single. A checksum
// output has no layout (single). A configured layout is kept.
LayoutChoice choose_layout(OutputLayout configured, OutputMode mode, const LayoutFacts& facts);

}  // namespace discount
