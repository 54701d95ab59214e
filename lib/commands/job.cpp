#include "commands/job.hpp"

#include <cstdlib>
#include <iostream>

#include "commands/commands.hpp"
#include "common/affinity.hpp"
#include "common/knobs.hpp"
#include "common/paths.hpp"
#include "common/startup.hpp"
#include "io/lists/open_input.hpp"
#include "io/output/output_existing.hpp"
#include "io/posix/posix_io.hpp"
#include "io/output/output.hpp"
#include "pipeline/pipeline.hpp"
#include "backend/system_memory.hpp"
#include "ranks/ranks.hpp"

namespace discount {

namespace {

// This rank's facts: its share of the node's free host memory and, for a
// kernel on the device, of its GPU's free memory (asking makes that GPU
// current, so a host job does not ask).
SystemFacts local_facts(const Config& config, const InputSource& input) {
  SystemFacts facts;
  facts.input = input_facts(input);
  facts.separate_device_memory = needs_device_copies(Space::device);
  facts.host_bytes = host_share(host_available_bytes(), ranks::local_size());
  if (config.compute.space == Space::device && facts.separate_device_memory)
    facts.device_bytes =
        device_share(device_free_bytes(ranks::local_device(visible_devices())), ranks::local_size(), visible_devices());
  facts.writer_threads = DirectWriter::threads();
  if (config.output.mode == OutputMode::file)  // output.layout: auto (resolve/layout_choice.hpp)
    facts.output_memory_backed = memory_backed(existing_folder(dir_of(config.output.file)));
  facts.rank = ranks::rank();
  facts.ranks = ranks::size();
  facts.knobs = read_knobs();  // once per job: the Python module's calls each read them anew
  return facts;
}

// The same facts on every rank, so all ranks resolve the same job: the
// smallest memory shares (a budget given as a percentage grows with them, so
// this is the smallest budget) and the most writer threads.
void agree_facts(SystemFacts& facts) {
  facts.host_bytes = ranks::min(facts.host_bytes);
  facts.device_bytes = ranks::min(facts.device_bytes);
  facts.writer_threads = unsigned(ranks::max(int(facts.writer_threads)));
}

}  // namespace

SystemFacts system_facts(const Config& config, const InputSource& input) {
  SystemFacts facts = ranks::collectively([&] { return local_facts(config, input); });
  agree_facts(facts);
  return facts;
}

namespace {

// Budgets against this rank's share of the machine, before any output exists:
// a plan that would not fit is refused, a generous budget only warned about.
void check_budgets_against_machine(const Plan& plan, const SystemFacts& facts) {
  const MachineMemory machine{facts.host_bytes, facts.separate_device_memory ? facts.device_bytes : 0};
  const std::string warning = ranks::collectively([&] { return check_machine_memory(plan, machine); });
  if (!warning.empty() && ranks::is_root()) std::cerr << "discount_app: warning: " << warning << std::endl;
}

// memory.chunk_axis: auto and output.layout: auto keep what an earlier run
// of this output recorded (rank 0 reads it; every rank resolves the same job).
void add_recorded_output(const Config& config, bool restart, SystemFacts& facts, Job& job) {
  if (config.output.mode != OutputMode::file) return;
  std::string axis, layout, where;
  ranks::collectively([&] {
    if (!ranks::is_root()) return;
    job.existing = std::make_shared<const ExistingOutput>(inspect_output(config.output.file));
    if (!config.memory.chunk_axis)
      if (const auto recorded = recorded_chunk_axis(*job.existing, config.output.overwrite, restart)) {
        axis = axis_name(recorded->axis);
        where = recorded->where;
      }
    if (config.output.layout == OutputLayout::automatic)
      if (const auto recorded = recorded_layout(*job.existing, config.output.overwrite, restart)) {
        layout = recorded->split ? "split" : "single";
        where = recorded->where;  // the same file as the axis's (io/output/output_existing.hpp)
      }
  });
  ranks::broadcast(axis);
  ranks::broadcast(layout);
  ranks::broadcast(where);
  facts.recorded_in = where;
  if (!axis.empty()) facts.recorded_chunk_axis = axis == "id" ? Axis::id : Axis::date;
  if (!layout.empty()) facts.recorded_layout = layout == "split" ? OutputLayout::split : OutputLayout::single;
}

// Kokkos 3.4 warns on stderr when OMP_PROC_BIND is unset; "false" is what an
// unset variable means for GCC's runtime, so setting it changes nothing else.
void quiet_openmp_warning() { ::setenv("OMP_PROC_BIND", "false", 0); }

}  // namespace

std::string layout_text(const JobSpec& spec) {
  if (spec.output_mode != OutputMode::file) return {};
  const OutputSpec& out = spec.output;
  std::string text = out.layout == OutputLayout::split ? "split, " + std::to_string(out.parts) + " parts, " +
                                                             std::to_string(out.writers) + " writer(s)"
                                                       : "single";
  return text + " (" + spec.report.layout_reason + ")";
}

// Checks the config, opens the input, resolves the job and makes the plan,
// before Kokkos starts or any output exists. Collective under MPI.
Job prepare(const Config& config, bool restart) {
  Job job;
  ranks::collectively([&] {
    check_config(config);
    job.input = open_input(config.input);
  });
  startup::mark("input");
  SystemFacts facts = system_facts(config, *job.input);
  // A device job's first GPU call (its free memory) makes the GPU runtime's context.
  startup::mark(facts.device_bytes ? "machine facts (GPU context)" : "machine facts");
  add_recorded_output(config, restart, facts, job);
  job.spec = ranks::collectively([&] { return resolve(config, facts); });
  job.plan = ranks::collectively([&] { return make_plan(job.spec.plan); });
  check_budgets_against_machine(job.plan, facts);
  job.fingerprint = fingerprint_of(job.spec.identity);
  return job;
}

std::vector<std::string> kokkos_arguments(const std::vector<std::string>& user_args) {
  std::vector<std::string> args{"discount_app"};
  args.insert(args.end(), user_args.begin(), user_args.end());
  for (auto& a : ranks::kokkos_rank_args(user_args, visible_devices(),
                                         ranks::threads_per_rank(process_cpu_count(), job_cpu_count())))
    args.push_back(a);
  return args;
}

// Starts Kokkos unless a caller (tests, an embedding code) already runs it.
void start_kokkos(std::optional<Kokkos::ScopeGuard>& kokkos, const std::vector<std::string>& user_args) {
  if (Kokkos::is_initialized()) return;
  quiet_openmp_warning();
  std::vector<std::string> args = kokkos_arguments(user_args);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  kokkos.emplace(argc, argv.data());
}

Config load_config_on_every_rank(const std::string& path) {
  return ranks::collectively([&] { return load_config(path); });
}

}  // namespace discount
