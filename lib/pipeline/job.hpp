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
};

// Returns the process exit status; throws discount::Error for failures.
int run_command(const Config& config, const RunOptions& options);
int plan_command(const Config& config);

std::string version_text();

}  // namespace discount
