// The commands' helpers that need no job (the layout line, Kokkos' command
// line, one rank's report), and one tiny job end to end: generate an input,
// run it, verify the output against a plain loop, and see verify catch a
// changed element.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "commands/job.hpp"
#include "commands/rank_reports.hpp"
#include "commands/tools.hpp"
#include "common/error.hpp"
#include "config/config.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "support/kokkos_env.hpp"
#include "support/output_files.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using discount::test_support::read_all;
using discount::test_support::TempDir;

TEST(LayoutText, NamesTheLayoutItsPartsWritersAndWhy) {
  JobSpec spec;
  spec.output_mode = OutputMode::file;
  spec.output.layout = OutputLayout::split;
  spec.output.parts = 11;
  spec.output.writers = 3;
  spec.report.layout_reason = "auto: the output's folder is on tmpfs";
  EXPECT_EQ(layout_text(spec), "split, 11 parts, 3 writer(s) (auto: the output's folder is on tmpfs)");
  spec.output.layout = OutputLayout::single;
  spec.report.layout_reason = "set by output.layout";
  EXPECT_EQ(layout_text(spec), "single (set by output.layout)");
  spec.output_mode = OutputMode::checksum;  // no file, no layout
  EXPECT_EQ(layout_text(spec), "");
}

// Kokkos' command line is the program name, then the user's options in their
// order; one rank on its node adds no device or thread options of its own.
TEST(KokkosArguments, ProgramNameThenTheUsersOptions) {
  EXPECT_EQ(kokkos_arguments({}), (std::vector<std::string>{"discount_app"}));
  const std::vector<std::string> user{"--kokkos-threads=3", "--kokkos-disable-warnings"};
  EXPECT_EQ(kokkos_arguments(user),
            (std::vector<std::string>{"discount_app", "--kokkos-threads=3", "--kokkos-disable-warnings"}));
}

// One rank's figures are the job's: combining leaves every number as it was.
TEST(RankReports, OneRanksReportIsTheJobs) {
  std::mt19937_64 rng(7);
  RunReport report;
  report.stages = {{"read", rng() % 1000003 + 1, 1.25, 5},
                   {"kernel", rng() % 1000003 + 1, 0.5, 5},
                   {"write", rng() % 1000003 + 1, 2.75, 4}};
  report.input_bytes = rng() % 99991 + 1;
  report.output_bytes = rng() % 99991 + 1;
  report.slabs_run = 9;
  report.device_path_seconds = 3.5;
  report.any_stage_seconds = 4.25;
  const RunReport before = report;
  combine_rank_reports(report);
  ASSERT_EQ(report.stages.size(), before.stages.size());
  for (std::size_t s = 0; s < report.stages.size(); ++s) {
    EXPECT_EQ(report.stages[s].name, before.stages[s].name);
    EXPECT_EQ(report.stages[s].bytes, before.stages[s].bytes);
    EXPECT_EQ(report.stages[s].seconds, before.stages[s].seconds);
    EXPECT_EQ(report.stages[s].slabs, before.stages[s].slabs);
  }
  EXPECT_EQ(report.input_bytes, before.input_bytes);
  EXPECT_EQ(report.output_bytes, before.output_bytes);
  EXPECT_EQ(report.slabs_run, before.slabs_run);
  EXPECT_EQ(report.device_path_seconds, before.device_path_seconds);
  EXPECT_EQ(report.any_stage_seconds, before.any_stage_seconds);
}

// generate, run and verify on an odd shape cut into several slabs: the output
// equals multBy * discount computed here with a plain loop over the input read
// back with plain HDF5, and verify refuses the output once one element changes.
TEST(Commands, GenerateRunVerifyATinyJob) {
  TempDir dir("discount_commands");
  const std::int64_t dates = 7, ids = 53, nums = 3;
  GenerateOptions generate;
  generate.dates = dates;
  generate.ids = ids;
  generate.nums = nums;
  generate.out = dir / "in.h5";
  generate.seed = 11;
  ASSERT_EQ(generate_command(generate), 0);

  // Slabs of 2 dates: several slabs, the last one partial.
  const Config config =
      parse_config("input: {file: in.h5}\noutput: {file: out.h5}\nmemory: {max_slab: 2544}\nlimits: {measure: false}\n",
                   dir / "job.yaml");
  std::atomic<int> stop{0};  // the test's own flag: the process's signal handlers stay as they are
  RunOptions options;
  options.quiet = true;
  options.stop = &stop;
  RunReport report;
  options.report_out = &report;
  ASSERT_EQ(run_command(config, options), 0);
  EXPECT_GT(report.slabs_run, 1);

  const auto mult = read_all(dir / "in.h5", "multBy");
  const auto disc = read_all(dir / "in.h5", "discount");
  auto cv = read_all(dir / "out.h5", "cv");
  ASSERT_EQ(mult.size(), static_cast<std::size_t>(ids * nums));
  ASSERT_EQ(disc.size(), static_cast<std::size_t>(dates * ids * nums));
  ASSERT_EQ(cv.size(), disc.size());
  for (std::int64_t d = 0; d < dates; ++d)
    for (std::int64_t i = 0; i < ids; ++i)
      for (std::int64_t k = 0; k < nums; ++k) {
        const auto m = static_cast<std::size_t>(i * nums + k), e = static_cast<std::size_t>((d * ids + i) * nums + k);
        ASSERT_NE(disc[e], 0.0) << e;
        ASSERT_EQ(cv[e], mult[m] * disc[e]) << "date " << d << " id " << i << " num " << k;
      }
  EXPECT_EQ(verify_command(config, VerifyOptions{}), 0);

  // One element changed in the output: verify must find it.
  {
    h5::Id f = h5::file(H5Fopen((dir / "out.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    h5::Id d = h5::dataset(H5Dopen2(f.get(), "cv", H5P_DEFAULT));
    cv[cv.size() / 2 + 1] *= 1.5;
    ASSERT_GE(H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, cv.data()), 0);
  }
  try {
    verify_command(config, VerifyOptions{});
    ADD_FAILURE() << "verify accepted a changed element";
  } catch (const Error& e) { EXPECT_EQ(e.code(), ExitCode::data_invalid) << e.what(); }
}
