// Nothing the job reads is ever written, renamed, truncated or deleted.
//
// The read set is every file a job reads, named by (st_dev, st_ino) after
// following symlinks: the config file, input.file, and every file HDF5
// reaches from it for input.multiplier and input.discount (external-link
// targets, virtual-dataset sources, external raw storage files). The write
// targets are every path the job writes, creates, renames onto or deletes.
// The command layer compares the two before any output exists
// (lib/commands/commands.cpp): a target that is a read file, by name,
// symlink or hard link, is refused with exit 73, naming both paths; a report
// path that is a read file or one of the output's own files is a
// configuration error (78).
//
// The comparison is pure but for stat(), and unit-tested in
// tests/unit/io/posix/test_read_set.cpp.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "config/config.hpp"

namespace discount {

struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId& other) const { return dev == other.dev && ino == other.ino; }
};

struct ReadFile {
  std::string path;  // as the job names it
  std::string why;   // "input.file", "virtual-dataset source of input.discount", ...
  FileId id;
};

class ReadSet {
 public:
  // Adds the file at `path` (symlinks followed); a path that does not exist
  // holds nothing to protect and is skipped. The first reason given for a
  // file is kept.
  void add(const std::string& path, const std::string& why);
  // The read file that `path` is (by dev/ino, symlinks followed), or nullptr
  // when `path` does not exist or is none of them.
  const ReadFile* find(const std::string& path) const;
  const std::vector<ReadFile>& files() const { return files_; }

 private:
  std::vector<ReadFile> files_;
};

// A path the job writes, creates, renames onto or deletes, and who does it
// (the key or option named in a refusal).
struct WriteTarget {
  std::string path;
  std::string role;      // "output.file", "report", "--restart"
  bool deletes = false;  // deleted rather than written
};

// What a file output writes: `<out>` (renamed onto), `<out>.partial`,
// `<out>.partial.tmp` (created, then renamed), `<out>.partial.lock`
// (created, truncated, deleted at the end); with `restart`, the deletion of
// an existing `<out>.partial`; every existing part folder of the output
// (`<out name>.parts-*`, split layout) and the files in it, so that the one
// check below covers them too.
std::vector<WriteTarget> output_write_targets(const std::string& out, bool restart);
// What the JSON report writes: `<report>` (renamed onto) and its temporary
// `<report>.tmp.<pid>` in the same folder (io/posix/atomic_file.hpp).
std::vector<WriteTarget> report_write_targets(const std::string& report, const std::string& role);

// Throws create_error (73) for the first target that is a file of `reads`:
// "output.file 'x.partial' is 'in.h5', which this job reads (input.file);
// inputs are never written".
void check_writes_disjoint(const ReadSet& reads, const std::vector<WriteTarget>& targets);

// A report path (`role`: "report" for the config key, "--report") that is a
// file this job reads, or one of `output_targets` (the same file, or the same
// name once made absolute), is refused with config_error (78) naming both.
void check_report_path(const std::string& report, const std::string& role, const ReadSet& reads,
                       const std::vector<WriteTarget>& output_targets);

// True when `a` and `b` name one file: the same dev/ino when both exist,
// else the same absolute path with the existing folders' symlinks resolved.
bool same_path(const std::string& a, const std::string& b);

}  // namespace discount
