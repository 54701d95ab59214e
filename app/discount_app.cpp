// discount_app: parse the command line, call one function in lib/, and turn
// errors into one stderr line and a documented exit code.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/crash_handler.hpp"
#include "common/error.hpp"
#include "backend/kokkos_threads.hpp"
#include "common/quote.hpp"
#include "common/threads.hpp"
#include "config/config.hpp"
#include "commands/commands.hpp"
#include "common/startup.hpp"
#include "ranks/ranks.hpp"

namespace {

const char* kDescription =
    "discount_app: cv[d][i][k] = multBy[i][k] * discount[d][i][k], streamed from HDF5 to HDF5\n"
    "in slabs cut by a memory budget, on a GPU (Kokkos CUDA) or CPU cores (Kokkos OpenMP).\n\n"
    "  discount_app input.yaml              run the job (the same as `discount_app run input.yaml`)\n"
    "  discount_app run input.yaml [--restart] [--dry-run] [--report run.json] [-q] [--remeasure]\n"
    "                                       run the job, resuming where a stopped run left off\n"
    "  discount_app plan input.yaml [--verbose] [--no-measure]\n"
    "                                       slabs, buffers and the predicted time, before running\n"
    "  discount_app verify input.yaml [--sample | --full]\n"
    "                                       check the output against the inputs, independently\n"
    "  discount_app generate --dates D --ids M --nums O --out FILE\n"
    "                       [--seed S] [--axes date,id,num] [--values random|realistic] [--force]\n"
    "                                       write a synthetic input file\n"
    "  discount_app config input.yaml       print the effective configuration, defaults included\n"
    "  discount_app --version               versions of the app, Kokkos, HDF5 (and MPI)\n\n"
    "`discount_app COMMAND --help` describes every option of a command.\n"
    "Kokkos options (--kokkos-threads=N, --kokkos-device-id=N, ...: any option that starts\n"
    "with --kokkos-) go to Kokkos unchanged.\n";

std::vector<discount::Axis> parse_axes(const std::string& text) {
  std::vector<discount::Axis> axes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name == "date")
      axes.push_back(discount::Axis::date);
    else if (name == "id")
      axes.push_back(discount::Axis::id);
    else if (name == "num")
      axes.push_back(discount::Axis::num);
    else
      throw discount::usage_error("--axes: unknown axis '" + name + "' (use date, id, num)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (axes.size() != 3 || axes[0] == axes[1] || axes[1] == axes[2] || axes[0] == axes[2])
    throw discount::usage_error("--axes must name date, id and num once each, e.g. id,date,num");
  return axes;
}

discount::GeneratedValues parse_values(const std::string& text) {
  if (text == "random") return discount::GeneratedValues::random;
  if (text == "realistic") return discount::GeneratedValues::realistic;
  throw discount::usage_error("--values: unknown kind '" + text + "' (use random, realistic)");
}

// CLI11's message (which may span lines and quote whatever was typed) as
// one bounded line.
std::string one_line(const std::string& text) {
  std::string line;
  for (char c : text) line += (c == '\n' || c == '\r') ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return discount::printable_for_message(line, 300);
}

int run(int argc, char** argv) {
  discount::startup::mark("exec to main");
  // Kokkos' own options travel separately; CLI11 would reject them.
  std::vector<std::string> kokkos_args;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--kokkos-", 9) == 0)
      kokkos_args.emplace_back(argv[i]);
    else
      args.emplace_back(argv[i]);
  }
  // `discount_app input.yaml` means `discount_app run input.yaml`.
  static const std::vector<std::string> commands{"run", "plan", "verify", "generate", "config"};
  const bool names_command = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return std::find(commands.begin(), commands.end(), a) != commands.end();
  });
  const bool has_operand = std::any_of(args.begin(), args.end(), [](const std::string& a) { return a[0] != '-'; });
  if (!names_command && has_operand) args.insert(args.begin(), "run");

  CLI::App app{kDescription, "discount_app"};
  app.footer(discount::exit_code_table());
  app.require_subcommand(0, 1);
  bool show_version = false;
  app.add_flag("--version", show_version,
               "print the versions of the app (and its git commit), Kokkos (backends, GPU arch), HDF5 and MPI");

  std::string config_path;
  discount::RunOptions run_options;
  auto* run_cmd = app.add_subcommand(
      "run", "run the job described by input.yaml; a run that was stopped or killed resumes where it left off");
  run_cmd->add_option("config", config_path, "the job's YAML file (docs/config.md)")->required();
  run_cmd->add_flag("--restart", run_options.restart, "discard a .partial output of a different job and start over");
  run_cmd->add_flag("--dry-run", run_options.dry_run,
                    "check everything a run checks and print the whole plan (as `plan --verbose`, without measuring "
                    "the disks); write nothing");
  run_cmd->add_option("--report", run_options.report_path, "write the JSON run report here (overrides `report:`)");
  run_cmd->add_flag("-q,--quiet", run_options.quiet,
                    "print no progress, status lines or summary on stdout (errors still go to stderr)");
  run_cmd->add_flag("--remeasure", run_options.remeasure,
                    "measure the link limits again instead of taking this host's cached ones (limits.cache_days)");

  auto* plan_cmd = app.add_subcommand(
      "plan", "print the job's shape, chunk axis, slabs, buffers and predicted wall time, before running it");
  plan_cmd->add_option("config", config_path, "the job's YAML file (docs/config.md)")->required();
  bool no_measure = false;
  plan_cmd->add_flag(
      "--no-measure", no_measure,
      "measure nothing: take the rates from limits: and the job's earlier report only (no I/O, no Kokkos)");
  bool plan_verbose = false;
  plan_cmd->add_flag("-v,--verbose", plan_verbose,
                     "also print each rate and where it came from, the prediction's derivation stage by stage,"
                     " and the resolved configuration");

  auto* config_cmd = app.add_subcommand(
      "config", "print the effective configuration, every default filled in, as YAML (checks that need no input)");
  config_cmd->add_option("config", config_path, "the job's YAML file (docs/config.md)")->required();

  bool sample = false;
  auto* verify_cmd = app.add_subcommand(
      "verify", "re-read the inputs and the output with plain HDF5 calls and check cv = multBy * discount exactly");
  verify_cmd->add_option("config", config_path, "the job's YAML file (docs/config.md)")->required();
  verify_cmd->add_flag("--sample", sample, "check a random sample of boxes instead of every element (quick)");
  // A flag without a variable; its description set apart: under C++20, CLI11 2.3 finds
  // add_flag(name, description) ambiguous.
  verify_cmd->add_flag("--full")->description("check every element (the default)");

  discount::GenerateOptions gen;
  std::string axes_text = "date,id,num", values_text = "random";
  auto* gen_cmd = app.add_subcommand(
      "generate",
      "write a synthetic input file: multBy and discount filled with random non-zero values, or (--values "
      "realistic) with discount curves and amounts in cents shaped like real inputs");
  gen_cmd->add_option("--dates", gen.dates, "number of dates (discount's date axis)")
      ->required()
      ->check(CLI::PositiveNumber);
  gen_cmd->add_option("--ids", gen.ids, "number of ids (shared by multBy and discount)")
      ->required()
      ->check(CLI::PositiveNumber);
  gen_cmd->add_option("--nums", gen.nums, "number of nums (shared by multBy and discount)")
      ->required()
      ->check(CLI::PositiveNumber);
  gen_cmd->add_option("--out", gen.out, "the HDF5 file to write; its folder must exist")->required();
  gen_cmd->add_option("--seed", gen.seed, "random seed: the same seed gives the same values (default 1)");
  gen_cmd->add_option("--axes", axes_text,
                      "order of discount's axes in the file, a permutation of date,id,num (default date,id,num)");
  gen_cmd->add_option(
      "--values", values_text,
      "random (default): uniform in [0.5, 1.5), the numbers input.synthetic computes on; they barely compress. "
      "realistic: discount = exp(-r t) to 8 decimals, t = (date + 1) / 12 years, at a rate r per (id, num) of "
      "0.50% to 8.00% in 4 decimals (many ids share one), and multBy amounts in cents from 1.00 to 1,000,000.00; "
      "smooth along dates and repeated across ids as real curves are, so gzip stores them in about a quarter of "
      "their size where random values barely compress (docs/user-guide.md, 3.1)");
  gen_cmd->add_flag("--force", gen.force, "replace the file if it exists (without it an existing file is an error)");

  discount::check_kokkos_args(kokkos_args);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // A job command without its YAML says what it wants.
    const bool missing = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
    for (const auto* cmd : {run_cmd, plan_cmd, verify_cmd, config_cmd})
      if (missing && *cmd && config_path.empty())
        throw discount::usage_error(cmd->get_name() + " needs the job's YAML file: discount_app " + cmd->get_name() +
                                    " job.yaml");
    throw discount::usage_error(one_line(e.what()) + " (discount_app --help lists the options)");
  }
  if (show_version) {
    std::cout << discount::version_text();
    return 0;
  }
  if (*run_cmd || *plan_cmd) kokkos_args = discount::prepare_kokkos_threads(kokkos_args);
  run_options.kokkos_args = kokkos_args;
  if (*run_cmd) return discount::run_command(discount::load_config_on_every_rank(config_path), run_options);
  if (*plan_cmd)
    return discount::plan_command(discount::load_config_on_every_rank(config_path),
                                  {!no_measure, kokkos_args, plan_verbose});
  if (*config_cmd) return discount::config_command(discount::load_config(config_path));
  if (*verify_cmd) return discount::verify_job(discount::load_config(config_path), sample);
  if (*gen_cmd) {
    gen.axes = parse_axes(axes_text);
    gen.values = parse_values(values_text);
    return discount::generate_job(gen);
  }
  std::cout << app.help();
  return static_cast<int>(discount::ExitCode::usage);
}

}  // namespace

// One stderr line per failure. Under MPI the rank that failed explains (with
// its rank number); an error that escaped without the ranks agreeing ends the
// whole job, since the other ranks may be waiting for this one.
int fail(int code, const std::string& line, const std::exception* error = nullptr) {
  namespace ranks = discount::ranks;
  if (!error || !ranks::reported_elsewhere(*error))
    // Printable and bounded whatever a message quotes (a path with control
    // bytes, say): the one line stays one line.
    std::cerr << "discount_app: " << (ranks::multi() ? "rank " + std::to_string(ranks::rank()) + ": " : "")
              << discount::printable_for_message(line, 4096) << "\n";
  if (ranks::multi() && !ranks::error_agreed()) ranks::abort_job(code);
  ranks::quiet_teardown();  // the line above stays the only one
  return code;
}

int main(int argc, char** argv) {
  discount::ranks::Session mpi(argc, argv);
  discount::crash::install_handler();  // after MPI's own handlers: one line, then the signal
  try {
    return run(argc, argv);
  } catch (const discount::Error& e) {
    return fail(static_cast<int>(e.code()), std::string("error: ") + e.what(), &e);
  } catch (const std::bad_alloc&) {
    return fail(static_cast<int>(discount::ExitCode::internal), "error: out of host memory; lower memory.host_budget");
  } catch (const std::exception& e) {
    return fail(static_cast<int>(discount::ExitCode::internal),
                std::string("internal error: ") + e.what() + " (please report)", &e);
  }
}
