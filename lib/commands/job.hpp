// What every command shares once the config is loaded: the job prepared
// (input open, resolved, planned) before Kokkos starts or any output exists,
// and Kokkos started with this rank's arguments. Internal to lib/commands.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "config/config.hpp"
#include "io/input/input.hpp"
#include "io/output/output_existing.hpp"
#include "plan/plan.hpp"
#include "resolve/resolve.hpp"

namespace discount {

// What every command knows about the job once the input is open.
struct Job {
  std::unique_ptr<InputSource> input;
  JobSpec spec;
  Plan plan;
  std::string fingerprint;  // fingerprint_of(spec.identity)
  // What rank 0 read of an existing output or partial (the one reading of
  // it: the chunk axis came from it, and the file output acts on it).
  std::shared_ptr<const ExistingOutput> existing;
};

// Checks the config, opens the input, resolves the job and makes the plan,
// before Kokkos starts or any output exists. Collective under MPI.
Job prepare(const Config& config, bool restart = false);

// The output's layout and why, for `plan` and the run's header: "split, 10
// parts, 10 writers (auto: ...)" or "single (set by output.layout)"; empty
// for a checksum output.
std::string layout_text(const JobSpec& spec);

// Starts Kokkos unless a caller (tests, an embedding code) already runs it.
void start_kokkos(std::optional<Kokkos::ScopeGuard>& kokkos, const std::vector<std::string>& user_args);

// plan and run --dry-run (commands/plan.cpp): the rates, then the plan and
// its predicted time on rank 0. `probe_io`: read the input and write a
// scratch file (plan; a dry run writes nothing).
struct PlanPrint {
  bool measure = true;
  bool probe_io = true;
  bool verbose = false;
};
int plan_with_limits(const Job& job, const std::vector<std::string>& kokkos_args, const PlanPrint& how,
                     double prepare_seconds);

}  // namespace discount
