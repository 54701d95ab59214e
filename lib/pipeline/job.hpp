// The commands behind the CLI: run, plan, verify, generate. Each validates
// everything it can before Kokkos starts or any output exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/tools.hpp"

namespace discount {

struct RunOptions {
  bool restart = false;
  bool dry_run = false;
  std::string report_path;        // overrides config.report when set
  std::vector<std::string> kokkos_args;  // --kokkos-* passed through
  bool quiet = false;
  // Benchmark only (hidden flag --bench-device-path): each staging buffer is
  // filled once, then slabs cycle host -> device -> host with no reads and
  // nothing written; needs output.mode: checksum, and gives no checksum.
  bool device_path_only = false;
};

// Returns the process exit status; throws discount::Error for failures.
int run_command(const Config& config, const RunOptions& options);
int plan_command(const Config& config);

std::string version_text();

}  // namespace discount
