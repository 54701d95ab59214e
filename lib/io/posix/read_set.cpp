#include "io/posix/read_set.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "common/error.hpp"
#include "io/posix/atomic_file.hpp"

namespace discount {

namespace {

bool file_id(const std::string& path, FileId& id) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return false;
  id = {st.st_dev, st.st_ino};
  return true;
}

// The absolute path with every existing folder's symlinks resolved (the
// last part too when it exists), for names of files not created yet.
std::string normal_path(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) return path;
  const std::filesystem::path normal = std::filesystem::weakly_canonical(absolute, error);
  return (error ? absolute.lexically_normal() : normal).string();
}

}  // namespace

void ReadSet::add(const std::string& path, const std::string& why) {
  FileId id;
  if (!file_id(path, id)) return;
  for (const ReadFile& file : files_)
    if (file.id == id) return;
  files_.push_back({path, why, id});
}

const ReadFile* ReadSet::find(const std::string& path) const {
  FileId id;
  if (!file_id(path, id)) return nullptr;
  for (const ReadFile& file : files_)
    if (file.id == id) return &file;
  return nullptr;
}

std::vector<WriteTarget> output_write_targets(const std::string& out, bool restart) {
  // In the order the run touches them: the lock, --restart's deletion, the
  // partial (made under its temporary name), the output.
  std::vector<WriteTarget> targets{{out + ".partial.lock", "output.file", false}};
  if (restart) targets.push_back({out + ".partial", "--restart", true});
  targets.push_back({out + ".partial.tmp", "output.file", false});
  targets.push_back({out + ".partial", "output.file", false});
  targets.push_back({out, "output.file", false});
  // Split layouts (io/records/output_parts.hpp): every part folder of this output
  // beside it, `<out name>.parts-*`, and the files in it: a resume writes the
  // partial's parts, an overwrite deletes the replaced set, a run deletes
  // folders no master names. A new set's folder gets a name no file has.
  const auto slash = out.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : out.substr(0, slash);
  const std::string prefix = (slash == std::string::npos ? out : out.substr(slash + 1)) + ".parts-";
  std::vector<std::string> folders;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0)
        folders.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  std::sort(folders.begin(), folders.end());
  for (const auto& folder : folders) {
    std::vector<std::string> files;
    if (DIR* d = ::opendir(folder.c_str())) {
      while (const dirent* entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") files.push_back(folder + "/" + name);
      }
      ::closedir(d);
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) targets.push_back({file, "output.file (a part of its split layout)", false});
    targets.push_back({folder, "output.file (a part folder of its split layout)", true});
  }
  return targets;
}

std::vector<WriteTarget> report_write_targets(const std::string& report, const std::string& role) {
  if (report.empty()) return {};
  return {{report, role, false}, {atomic_temp_path(report), role, false}};
}

void check_writes_disjoint(const ReadSet& reads, const std::vector<WriteTarget>& targets) {
  for (const WriteTarget& target : targets) {
    const ReadFile* read = reads.find(target.path);
    if (!read) continue;
    const std::string read_file = "'" + read->path + "', which this job reads (" + read->why + ")";
    if (target.deletes)
      throw create_error(target.role + " would delete '" + target.path + "', which is " + read_file +
                         "; inputs are never deleted");
    throw create_error(target.role + " '" + target.path + "' is " + read_file + "; inputs are never written");
  }
}

bool same_path(const std::string& a, const std::string& b) {
  FileId ia, ib;
  const bool a_exists = file_id(a, ia), b_exists = file_id(b, ib);
  if (a_exists && b_exists) return ia == ib;
  return normal_path(a) == normal_path(b);
}

void check_report_path(const std::string& report, const std::string& role, const ReadSet& reads,
                       const std::vector<WriteTarget>& output_targets) {
  if (report.empty()) return;
  for (const WriteTarget& mine : report_write_targets(report, role)) {
    const std::string what = mine.path == report ? role + " '" + report + "'"
                                                 : role + " '" + report + "' (its temporary file '" + mine.path + "')";
    if (const ReadFile* read = reads.find(mine.path))
      throw config_error(what + " is '" + read->path + "', which this job reads (" + read->why +
                         "); choose another report file");
    for (const WriteTarget& out : output_targets)
      if (!out.deletes && same_path(mine.path, out.path))
        throw config_error(what + " is '" + out.path + "', which this job writes (" + out.role +
                           "); choose another report file");
  }
}

}  // namespace discount
