// Nothing the job reads is written (io/posix/read_set.hpp): the comparison of the
// files a job writes with the files it reads, by dev/ino and by name; the
// report's atomic writer (io/posix/atomic_file.hpp); the lock holder's text made
// printable (common/quote.hpp). No HDF5 here: job_read_set is covered end to
// end by tests/e2e/e2e_input_safety.py.
#include <algorithm>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "io/posix/atomic_file.hpp"
#include "common/quote.hpp"
#include "io/posix/read_set.hpp"

#include "support/file_text.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using TempDir = discount::test_support::TempDir;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read(const std::string& path) { return discount::test_support::read_text(path); }

// The error `body` throws: its code and message.
template <class Body>
std::pair<ExitCode, std::string> refusal(Body&& body) {
  try {
    body();
  } catch (const Error& e) { return {e.code(), e.what()}; }
  return {ExitCode::ok, ""};
}

}  // namespace

TEST(ReadSet, FindsAFileByNameSymlinkAndHardLink) {
  TempDir dir;
  write(dir / "in.h5", "data");
  ReadSet reads;
  reads.add(dir / "in.h5", "input.file");
  reads.add(dir / "missing.h5", "never there");  // nothing to protect
  ASSERT_EQ(reads.files().size(), 1u);
  fs::create_symlink(dir / "in.h5", dir / "sym.h5");
  fs::create_hard_link(dir / "in.h5", dir / "hard.h5");
  write(dir / "other.h5", "data");
  EXPECT_NE(reads.find(dir / "in.h5"), nullptr);
  EXPECT_NE(reads.find(dir / "sym.h5"), nullptr);
  EXPECT_NE(reads.find(dir / "hard.h5"), nullptr);
  fs::create_directory(dir / "sub");
  EXPECT_NE(reads.find(dir.path() + "/./sub/../in.h5"), nullptr);
  EXPECT_EQ(reads.find(dir / "other.h5"), nullptr) << "same bytes, another file";
  EXPECT_EQ(reads.find(dir / "not_yet.h5"), nullptr);
  // The first reason given is kept for a file added twice (multBy and discount in one file).
  reads.add(dir / "hard.h5", "external-link target of input.discount");
  ASSERT_EQ(reads.files().size(), 1u);
  EXPECT_EQ(reads.find(dir / "sym.h5")->why, "input.file");
}

TEST(WriteTargets, TheOutputsFilesAndRestartsDeletion) {
  auto targets = output_write_targets("/d/out.h5", false);
  std::vector<std::string> paths;
  for (const auto& t : targets) paths.push_back(t.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/d/out.h5.partial.lock", "/d/out.h5.partial.tmp", "/d/out.h5.partial",
                                             "/d/out.h5"}));
  // --restart's deletion comes before the partial is written, so it is the one named.
  targets = output_write_targets("/d/out.h5", true);
  ASSERT_EQ(targets.size(), 5u);
  EXPECT_TRUE(targets[1].deletes);
  EXPECT_EQ(targets[1].role, "--restart");
  EXPECT_EQ(targets[1].path, "/d/out.h5.partial");
  EXPECT_TRUE(report_write_targets("", "report").empty());
  const auto report = report_write_targets("/d/run.json", "report");
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[1].path, "/d/run.json.tmp." + std::to_string(::getpid()));
}

TEST(CheckWritesDisjoint, RefusesAReadFileNamingBothPaths) {
  TempDir dir;
  write(dir / "src.h5", "source");
  ReadSet reads;
  reads.add(dir / "src.h5", "virtual-dataset source of input.discount");
  const std::string out = dir / "out.h5";
  EXPECT_EQ(refusal([&] { check_writes_disjoint(reads, output_write_targets(out, true)); }).first, ExitCode::ok);
  fs::create_symlink(dir / "src.h5", out + ".partial");
  const auto [code, message] = refusal([&] { check_writes_disjoint(reads, output_write_targets(out, false)); });
  EXPECT_EQ(code, ExitCode::cannot_create);
  EXPECT_EQ(message,
            "output.file '" + out + ".partial' is '" + (dir / "src.h5") +
                "', which this job reads (virtual-dataset source of input.discount); inputs are never written");
  // --restart's deletion is named as such.
  std::vector<WriteTarget> deletion{{out + ".partial", "--restart", true}};
  const auto deleted = refusal([&] { check_writes_disjoint(reads, deletion); });
  EXPECT_EQ(deleted.first, ExitCode::cannot_create);
  EXPECT_NE(deleted.second.find("--restart would delete '" + out + ".partial'"), std::string::npos) << deleted.second;
  EXPECT_NE(deleted.second.find("inputs are never deleted"), std::string::npos) << deleted.second;
}

// Split layout: the part folders beside the output and their files are in
// the write list; an input that is one of them (here a hard link) is refused.
TEST(CheckWritesDisjoint, RefusesAnInputThatIsAPartOfASplitOutput) {
  TempDir dir;
  fs::create_directory(dir / "out.h5.parts-1a2b");
  write(dir / "out.h5.parts-1a2b/part-00000.h5", "part");
  fs::create_directory(dir / "other.h5.parts-1a2b");  // another output's: not listed
  write(dir / "other.h5.parts-1a2b/part-00000.h5", "part");
  const std::string out = dir / "out.h5";
  std::vector<std::string> paths;
  for (const auto& t : output_write_targets(out, false)) paths.push_back(t.path);
  EXPECT_NE(std::find(paths.begin(), paths.end(), dir / "out.h5.parts-1a2b/part-00000.h5"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), dir / "out.h5.parts-1a2b"), paths.end());
  EXPECT_EQ(std::find(paths.begin(), paths.end(), dir / "other.h5.parts-1a2b/part-00000.h5"), paths.end());
  fs::create_hard_link(dir / "out.h5.parts-1a2b/part-00000.h5", dir / "in.h5");
  ReadSet reads;
  reads.add(dir / "in.h5", "input.file");
  const auto [code, message] = refusal([&] { check_writes_disjoint(reads, output_write_targets(out, false)); });
  EXPECT_EQ(code, ExitCode::cannot_create);
  EXPECT_NE(message.find("part-00000.h5"), std::string::npos) << message;
  EXPECT_NE(message.find("input.file"), std::string::npos) << message;
}

TEST(CheckReportPath, ReadFilesAndTheOutputsFilesAreConfigErrors) {
  TempDir dir;
  write(dir / "job.yaml", "yaml");
  ReadSet reads;
  reads.add(dir / "job.yaml", "the config file");
  const auto outputs = output_write_targets(dir / "out.h5", true);
  EXPECT_EQ(refusal([&] { check_report_path(dir / "run.json", "report", reads, outputs); }).first, ExitCode::ok);
  EXPECT_EQ(refusal([&] { check_report_path("", "report", reads, outputs); }).first, ExitCode::ok);
  const auto config = refusal([&] { check_report_path(dir / "job.yaml", "--report", reads, outputs); });
  EXPECT_EQ(config.first, ExitCode::config);
  EXPECT_NE(config.second.find("--report '" + (dir / "job.yaml") + "' is '"), std::string::npos) << config.second;
  EXPECT_NE(config.second.find("(the config file)"), std::string::npos) << config.second;
  // The output's files by name, before they exist, however the path is spelled.
  for (const std::string& name : {dir / "out.h5", dir.path() + "/x/../out.h5.partial", dir / "out.h5.partial.lock"}) {
    const auto output = refusal([&] { check_report_path(name, "report", reads, outputs); });
    EXPECT_EQ(output.first, ExitCode::config) << name;
    EXPECT_NE(output.second.find("which this job writes (output.file)"), std::string::npos) << output.second;
  }
  // A relative name from the working directory.
  const fs::path here = fs::current_path();
  fs::current_path(dir.path());
  EXPECT_EQ(refusal([&] { check_report_path("out.h5", "--report", reads, outputs); }).first, ExitCode::config);
  fs::current_path(here);
}

TEST(SamePath, ByFileWhenBothExistByNameOtherwise) {
  TempDir dir;
  write(dir / "a", "x");
  fs::create_hard_link(dir / "a", dir / "b");
  fs::create_directory(dir / "sub");
  fs::create_directory_symlink(dir / "sub", dir / "link");
  EXPECT_TRUE(same_path(dir / "a", dir / "b"));
  EXPECT_TRUE(same_path(dir / "link/new", dir / "sub/new"));
  EXPECT_FALSE(same_path(dir / "a", dir / "sub/new"));
  EXPECT_FALSE(same_path(dir / "new1", dir / "new2"));
}

TEST(AtomicFile, WritesWholeAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir / "run.json";
  write(path, "old");
  write_file_atomically(path, "{\"new\": 1}\n", "report");
  EXPECT_EQ(read(path), "{\"new\": 1}\n");
  EXPECT_FALSE(fs::exists(atomic_temp_path(path)));
  // A failure (no such folder) names the file and leaves nothing behind.
  const auto missing = refusal([&] { write_file_atomically(dir / "no/run.json", "x", "report"); });
  EXPECT_EQ(missing.first, ExitCode::io_error);
  EXPECT_NE(missing.second.find("report '" + (dir / "no/run.json") + "'"), std::string::npos) << missing.second;
  // A symlink at the temporary name is not followed.
  write(dir / "victim", "keep");
  fs::create_symlink(dir / "victim", atomic_temp_path(path));
  EXPECT_EQ(refusal([&] { write_file_atomically(path, "y", "report"); }).first, ExitCode::io_error);
  EXPECT_EQ(read(dir / "victim"), "keep");
}
