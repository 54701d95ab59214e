// The commands behind the CLI: run (commands/run.cpp), plan (plan.cpp),
// verify, generate, config and version, on the job preparation they share
// (job.cpp). Each validates everything it can before Kokkos starts or any output
// exists, and returns the process exit status; failures are discount::Error.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/input/input.hpp"
#include "commands/tools.hpp"
#include "report/progress.hpp"
#include "report/report.hpp"
#include "resolve/resolve.hpp"

namespace discount {

struct RunOptions {
  bool restart = false;
  bool dry_run = false;
  std::string report_path;               // overrides config.report when set
  std::vector<std::string> kokkos_args;  // --kokkos-* passed through
  bool quiet = false;
  bool remeasure = false;  // ignore this host's cached link limits (and refresh them)
  // In-process callers (the Python module, lib/commands/in_process.hpp):
  // their own stop flag (a signal number once asked to stop; the process's
  // signal handlers are then left alone), the progress figures after every
  // slab, and the finished run's report (the JSON report's content).
  const std::atomic<int>* stop = nullptr;
  std::function<void(const ProgressFields&)> on_progress;
  RunReport* report_out = nullptr;
};

// `discount_app run`: the job, resumed where a killed run stopped.
int run_command(const Config& config, const RunOptions& options);
struct PlanOptions {
  // false (--no-measure): no I/O beyond opening the input, no Kokkos; the
  // rates come from limits: and the job's earlier report only.
  bool measure = true;
  std::vector<std::string> kokkos_args;  // --kokkos-* passed through
  // false: a short summary (shapes, slabs, buffers, predicted wall and its
  // bottleneck); true (--verbose): also each rate's source, the prediction's
  // derivation and the resolved configuration.
  bool verbose = false;
};
// `discount_app plan`: shapes, slabs, buffers, bytes per stage, and the
// predicted time with where each rate came from (lib/probe).
int plan_command(const Config& config, const PlanOptions& options);
// `discount_app config`: the effective configuration, after the rules that
// need no input (resolve/resolve.hpp's check_config).
int config_command(const Config& config);
// `discount_app verify` and `discount_app generate` (commands/tools.hpp).
int verify_job(const Config& config, bool sample);
int generate_job(const GenerateOptions& options);

// What resolve() needs to know of this machine, the same on every rank
// (collective under MPI): each rank's share of the node's free host memory
// and of its GPU's (for compute.space: device), the smallest over ranks, and
// the most O_DIRECT writer threads.
SystemFacts system_facts(const Config& config, const InputSource& input);
// Kokkos' command line: `user_args` plus, under MPI, this rank's GPU and
// share of the cores.
std::vector<std::string> kokkos_arguments(const std::vector<std::string>& user_args);

// The config file, read on every rank under MPI (a bad one fails them all alike).
Config load_config_on_every_rank(const std::string& path);

// App, git commit, Kokkos (backends, GPU arch), HDF5 and MPI versions.
std::string version_text();

}  // namespace discount
