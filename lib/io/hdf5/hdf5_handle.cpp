#include "io/hdf5/hdf5_handle.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/error.hpp"
#include "io/hdf5/attributes.hpp"

namespace discount::h5 {

void check(herr_t status, const char* call) {
  if (status < 0) throw internal_error(std::string("HDF5 call ") + call + " failed");
}

Id input_file_access(std::size_t metadata_cache_bytes) {
  Id fapl = plist(H5Pcreate(H5P_FILE_ACCESS));
  H5AC_cache_config_t config{};
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  check(H5Pget_mdc_config(fapl.get(), &config), "H5Pget_mdc_config");
  config.set_initial_size = true;
  config.initial_size = std::min<std::size_t>(config.initial_size, metadata_cache_bytes);
  config.max_size = metadata_cache_bytes;
  config.min_size = std::min<std::size_t>(config.min_size, metadata_cache_bytes);
  check(H5Pset_mdc_config(fapl.get(), &config), "H5Pset_mdc_config");
  return fapl;
}

Id input_dataset_access() {
  Id dapl = plist(H5Pcreate(H5P_DATASET_ACCESS));
  check(H5Pset_efile_prefix(dapl.get(), "${ORIGIN}"), "H5Pset_efile_prefix");
  check(H5Pset_virtual_prefix(dapl.get(), "${ORIGIN}"), "H5Pset_virtual_prefix");
  return dapl;
}

std::string shape_string(const std::vector<hsize_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? " x " : "") + std::to_string(dims[i]);
  return text + "]";
}

std::vector<hsize_t> dataset_dims(hid_t dataset) {
  Id space = dataspace(H5Dget_space(dataset));
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) throw internal_error("H5Sget_simple_extent_ndims failed");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

// UTF-8 variable-length text (io/hdf5/attributes.hpp): h5py reads it as str.
void write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  write_text_attribute(object, name, value);
}

Id zeroed_dataset(hid_t file, const char* name, hid_t type, hsize_t count) {
  Id dcpl = plist(H5Pcreate(H5P_DATASET_CREATE));
  check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  Id space = dataspace(H5Screate_simple(1, &count, nullptr));
  Id data = dataset(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!data) return data;
  std::vector<std::uint8_t> zeros(static_cast<std::size_t>(count) * H5Tget_size(type), 0);
  if (H5Dwrite(data.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data()) < 0) return Id{};
  return data;
}

// Fixed-length (files from older versions) or variable-length text.
std::string read_string_attribute(hid_t object, const std::string& name) { return read_text_attribute(object, name); }

namespace {

struct Walk {
  std::vector<DatasetEntry>* found;
  std::size_t links_left;
};

// One group being walked: its path ("" for the root) and depth.
struct GroupVisit {
  Walk* walk;
  const std::string* prefix;
  int depth;
};

herr_t visit_link(hid_t group, const char* name, const H5L_info_t* info, void* data);

void walk_group(hid_t group, const std::string& prefix, Walk& walk, int depth) {
  GroupVisit here{&walk, &prefix, depth};
  hsize_t index = 0;
  H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, visit_link, &here);
}

herr_t visit_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto& here = *static_cast<GroupVisit*>(data);
  if (here.walk->links_left == 0) return 1;  // stop: enough
  --here.walk->links_left;
  if (info->type != H5L_TYPE_HARD) return 0;  // soft and external links: their targets are listed where they live
  const std::string path = *here.prefix + "/" + name;
  try {  // no exception may cross HDF5's C frames
    Id object(H5Oopen(group, name, H5P_DEFAULT), H5Oclose);
    // HDF5 refuses to open a dataset again with other access properties than
    // the open one has (the input's datasets: input_dataset_access).
    if (!object) object = dataset(H5Dopen2(group, name, input_dataset_access().get()));
    if (!object) return 0;
    const H5I_type_t type = H5Iget_type(object.get());
    if (type == H5I_DATASET)
      here.walk->found->push_back({path, dataset_dims(object.get())});
    else if (type == H5I_GROUP && here.depth < 32)
      walk_group(object.get(), path, *here.walk, here.depth + 1);
  } catch (const std::exception&) {
    // An object that cannot be described is not a candidate.
  }
  return 0;
}

}  // namespace

std::vector<DatasetEntry> list_datasets(hid_t file, std::size_t max_links) {
  QuietErrors quiet;
  std::vector<DatasetEntry> found;
  Walk walk{&found, max_links};
  Id root = group(H5Gopen2(file, "/", H5P_DEFAULT));
  if (root) walk_group(root.get(), "", walk, 0);
  return found;
}

std::string dataset_candidates(hid_t file, int rank, std::uint64_t elements) {
  constexpr std::size_t kShown = 8;
  const std::vector<DatasetEntry> all = list_datasets(file);
  const auto count_of = [](const DatasetEntry& d) {
    std::uint64_t n = 1;
    for (hsize_t x : d.dims) n *= x;
    return n;
  };
  // The closest first: the right size and rank, then the right size, then the right rank.
  const auto score = [&](const DatasetEntry& d) {
    return (elements && count_of(d) == elements ? 2 : 0) + (static_cast<int>(d.dims.size()) == rank ? 1 : 0);
  };
  std::vector<const DatasetEntry*> fit;
  for (const auto& d : all)
    if (score(d) > 0) fit.push_back(&d);
  std::stable_sort(fit.begin(), fit.end(),
                   [&](const DatasetEntry* a, const DatasetEntry* b) { return score(*a) > score(*b); });
  const auto list = [&](const std::vector<const DatasetEntry*>& entries) {
    std::string text;
    for (std::size_t i = 0; i < entries.size() && i < kShown; ++i)
      text += (i ? ", " : "") + entries[i]->path + " " + shape_string(entries[i]->dims);
    if (entries.size() > kShown) text += " and " + std::to_string(entries.size() - kShown) + " more";
    return text;
  };
  const std::string what =
      "rank " + std::to_string(rank) + (elements ? " or " + std::to_string(elements) + " elements" : std::string());
  if (!fit.empty()) return "; datasets of " + what + " there: " + list(fit);
  if (all.empty()) return "; the file holds no datasets";
  std::vector<const DatasetEntry*> every;
  for (const auto& d : all) every.push_back(&d);
  return "; the file holds no dataset of " + what + " (it holds " + list(every) + ")";
}

namespace {

herr_t collect_message(unsigned, const H5E_error2_t* error, void* data) {
  auto& found = *static_cast<std::vector<std::string>*>(data);
  if (error && error->desc && *error->desc && (found.empty() || found.back() != error->desc))
    found.emplace_back(error->desc);
  return 0;
}

bool holds(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

}  // namespace

std::string error_messages() {
  std::vector<std::string> found;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &found);
  std::string text;
  for (const auto& message : found) text += (text.empty() ? "" : "; ") + message;
  return text;
}

OpenFailure open_failure(const std::string& messages) {
  if (holds(messages, "truncated file")) return OpenFailure::truncated;
  if (holds(messages, "unable to lock file")) return OpenFailure::locked;
  return OpenFailure::other;
}

bool read_failure_is_damage(const std::string& messages) {
  // HDF5 1.10's texts for a chunk that does not decode or check out; a read
  // the operating system failed says "file read failed" (with errno) instead.
  for (const char* damage :
       {"filter returned failure", "data error detected", "inflate() failed", "checksum", "incorrect metadata checksum",
        "can't decode", "bad object header", "unable to load B-tree", "wrong B-tree signature", "bad local heap",
        "chunk size", "unable to read raw data chunk", "addr overflow"})
    if (holds(messages, damage) && !holds(messages, "file read failed")) return true;
  return false;
}

std::mutex& library_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace discount::h5
