// job_read_set: the files HDF5 reads for the job's two datasets, found the
// way HDF5 finds them (io/posix/read_set.hpp).
#include "io/hdf5/read_set_hdf5.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "common/knobs.hpp"
#include "common/paths.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/vds_names.hpp"
#include "io/posix/read_set.hpp"

namespace discount {

namespace {

constexpr int kMaxDepth = 8;              // links, mappings and sources followed from input.file
constexpr std::size_t kMaxVisits = 4096;  // objects looked at in all (a VDS of many sources)

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string joined(const std::string& folder, const std::string& name) {
  return folder.empty() ? name : folder.back() == '/' ? folder + name : folder + "/" + name;
}

// "${ORIGIN}" in a prefix stands for the folder of the HDF5 file that names
// the other file.
std::string with_origin(std::string prefix, const std::string& h5_file) {
  const std::string origin = "${ORIGIN}";
  for (auto at = prefix.find(origin); at != std::string::npos; at = prefix.find(origin))
    prefix.replace(at, origin.size(), dir_of(h5_file));
  return prefix;
}

std::vector<std::string> env_list(const char* name) {
  std::vector<std::string> out;
  const char* value = environment_value(name);
  if (!value) return out;
  std::string text(value);
  for (std::size_t start = 0; start <= text.size();) {
    const auto colon = text.find(':', start);
    const std::string part = text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!part.empty()) out.push_back(part);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

bool is_hdf5(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  h5::QuietErrors quiet;
  return H5Fis_hdf5(path.c_str()) > 0;
}

// The file an external link or a virtual mapping in `parent` names, searched
// as HDF5 searches (H5F_prefix_open_file): an absolute name as is, else its
// last part; then the folders of `env` (HDF5_EXT_PREFIX, HDF5_VDS_PREFIX),
// the ${ORIGIN} prefix the input's datasets are opened with (the parent's
// folder, h5::input_dataset_access), and the working directory. Empty when
// none opens.
std::string linked_file(const std::string& parent, const std::string& name, const char* env) {
  if (name.empty()) return {};
  std::string rest = name;
  if (name[0] == '/') {
    if (is_hdf5(name)) return name;
    rest = base_of(name);
  }
  for (const std::string& prefix : env_list(env))
    if (is_hdf5(joined(with_origin(prefix, parent), rest))) return joined(with_origin(prefix, parent), rest);
  if (is_hdf5(joined(dir_of(parent), rest))) return joined(dir_of(parent), rest);
  if (is_hdf5(rest)) return rest;
  return {};
}

// An external raw storage file of a dataset held in `holder`: HDF5 joins the
// efile prefix (HDF5_EXTFILE_PREFIX, else the input's "${ORIGIN}") and a
// relative name.
std::string external_raw_file(const std::string& holder, const std::string& name) {
  if (name.empty() || name[0] == '/') return name;
  const char* env = environment_value("HDF5_EXTFILE_PREFIX");
  const std::string prefix = env && *env ? std::string(env) : std::string("${ORIGIN}");
  return joined(with_origin(prefix, holder), name);
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start < path.size()) {
    const auto slash = path.find('/', start);
    const std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

std::string path_of(const std::vector<std::string>& parts, std::size_t from) {
  std::string path;
  for (std::size_t i = from; i < parts.size(); ++i) path += "/" + parts[i];
  return path.empty() ? "/" : path;
}

class Collector {
 public:
  explicit Collector(ReadSet& reads) : reads_(reads) {}

  // The object at `path` in the HDF5 file `file`, for the dataset `key`.
  void object(const std::string& file, const std::string& path, const std::string& key, int depth) {
    if (depth > kMaxDepth || ++visits_ > kMaxVisits) return;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return;
    if (!seen_.insert(std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + path).second) return;
    h5::QuietErrors quiet;
    h5::Id h5file = h5::file(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (!h5file) return;
    std::vector<std::string> parts = split_path(path);
    std::string at;  // the part of `path` walked so far, hard links only
    for (std::size_t i = 0, soft = 0; i < parts.size();) {
      const std::string here = at + "/" + parts[i];
      H5L_info_t link{};
      if (H5Lget_info(h5file.get(), here.c_str(), &link, H5P_DEFAULT) < 0) return;
      if (link.type == H5L_TYPE_HARD) {
        at = here;
        ++i;
        continue;
      }
      std::vector<char> value(link.u.val_size + 1, '\0');
      if (H5Lget_val(h5file.get(), here.c_str(), value.data(), value.size(), H5P_DEFAULT) < 0) return;
      if (link.type == H5L_TYPE_SOFT) {
        if (++soft > 64) return;  // a cycle of soft links: HDF5 refuses it too
        const std::string target(value.data());
        std::vector<std::string> next = split_path(!target.empty() && target[0] == '/' ? target : at + "/" + target);
        next.insert(next.end(), parts.begin() + static_cast<std::ptrdiff_t>(i) + 1, parts.end());
        parts = next;
        at.clear();
        i = 0;
        continue;
      }
      const char *target_file = nullptr, *target = nullptr;
      if (link.type != H5L_TYPE_EXTERNAL ||
          H5Lunpack_elink_val(value.data(), value.size(), nullptr, &target_file, &target) < 0)
        return;
      const std::string why = "external-link target of " + key;
      opened_by_hdf5(h5file.get(), here, why);
      const std::string linked = linked_file(file, target_file, "HDF5_EXT_PREFIX");
      if (linked.empty()) return;
      reads_.add(linked, why);
      std::vector<std::string> rest = split_path(target);
      rest.insert(rest.end(), parts.begin() + static_cast<std::ptrdiff_t>(i) + 1, parts.end());
      object(linked, path_of(rest, 0), key, depth + 1);
      return;
    }
    dataset(h5file.get(), file, at.empty() ? "/" : at, key, depth);
  }

 private:
  // The file HDF5 itself opens through the external link at `path`: a check
  // on linked_file's search.
  void opened_by_hdf5(hid_t file, const std::string& path, const std::string& why) {
    h5::Id object(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
    if (!object) return;
    h5::Id holder = h5::file(H5Iget_file_id(object.get()));
    const ssize_t length = holder ? H5Fget_name(holder.get(), nullptr, 0) : -1;
    if (length <= 0) return;
    std::vector<char> name(static_cast<std::size_t>(length) + 1, '\0');
    if (H5Fget_name(holder.get(), name.data(), name.size()) > 0) reads_.add(name.data(), why);
  }

  // A dataset's other files: virtual sources and external raw storage.
  void dataset(hid_t h5file, const std::string& file, const std::string& path, const std::string& key, int depth) {
    // The input's access list: HDF5 refuses to open a dataset already open
    // (by the input) with other file prefixes.
    h5::Id data = h5::dataset(H5Dopen2(h5file, path.c_str(), h5::input_dataset_access().get()));
    if (!data) data = h5::dataset(H5Dopen2(h5file, path.c_str(), H5P_DEFAULT));
    if (!data) return;
    h5::Id dcpl = h5::plist(H5Dget_create_plist(data.get()));
    if (!dcpl) return;
    if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL) {
      std::size_t count = 0;
      if (H5Pget_virtual_count(dcpl.get(), &count) < 0) return;
      for (std::size_t i = 0; i < count; ++i) {
        const std::string source = vds_unescape(text_of(H5Pget_virtual_filename, dcpl.get(), i));
        const std::string inner = vds_unescape(text_of(H5Pget_virtual_dsetname, dcpl.get(), i));
        const std::string from = source == "." ? file : linked_file(file, source, "HDF5_VDS_PREFIX");
        if (from.empty()) continue;
        reads_.add(from, "virtual-dataset source of " + key);
        object(from, inner, key, depth + 1);
      }
    }
    const int externals = H5Pget_external_count(dcpl.get());
    for (int i = 0; i < externals; ++i) {
      char name[4096] = {};
      off_t offset = 0;
      hsize_t size = 0;
      if (H5Pget_external(dcpl.get(), static_cast<unsigned>(i), sizeof name, name, &offset, &size) < 0) continue;
      const std::string why = "external raw storage of " + key;
      reads_.add(external_raw_file(file, name), why);
      // A dataset HDF5 opens by itself (a virtual dataset's source) gets no
      // ${ORIGIN} prefix: a relative name is then looked up from the working
      // directory. Both are kept.
      if (name[0] != '/') reads_.add(name, why);
    }
  }

  static std::string text_of(ssize_t (*get)(hid_t, size_t, char*, size_t), hid_t dcpl, std::size_t i) {
    const ssize_t length = get(dcpl, i, nullptr, 0);
    if (length <= 0) return {};
    std::vector<char> text(static_cast<std::size_t>(length) + 1, '\0');
    get(dcpl, i, text.data(), text.size());
    return text.data();
  }

  ReadSet& reads_;
  std::size_t visits_ = 0;
  std::set<std::string> seen_;  // "dev:ino:path" already walked
};

}  // namespace

ReadSet job_read_set(const Config& config) {
  ReadSet reads;
  reads.add(config.source_path, "the config file");
  // Every listed file of input.file (a list: each one and what it links to).
  const std::vector<std::string> inputs =
      config.input.files.empty() ? std::vector<std::string>{config.input.file} : config.input.files;
  for (const std::string& file : config.input.synthetic ? std::vector<std::string>{} : inputs) {
    if (file.empty()) continue;
    reads.add(file, "input.file");
    if (is_hdf5(file)) {
      Collector collect(reads);
      collect.object(file, config.input.multiplier, "input.multiplier", 0);
      collect.object(file, config.input.discount, "input.discount", 0);
    }
  }
  return reads;
}

void check_run_writes(const Config& config, bool restart, const std::string& report, const std::string& report_role) {
  const ReadSet reads = job_read_set(config);
  std::vector<WriteTarget> targets;
  if (config.output.mode == OutputMode::file) targets = output_write_targets(config.output.file, restart);
  check_report_path(report, report_role, reads, targets);
  for (WriteTarget& target : report_write_targets(report, report_role)) targets.push_back(target);
  check_writes_disjoint(reads, targets);
}

}  // namespace discount
