#include "io/output/output_existing.hpp"

#include <sys/stat.h>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"

namespace discount {

StoredOutput stored_output(const std::string& path) {
  StoredOutput stored;
  struct stat st {};
  stored.exists = ::lstat(path.c_str(), &st) == 0;
  if (!stored.exists) return stored;
  h5::QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) return stored;
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file || H5Lexists(file.get(), kOutputGroup, H5P_DEFAULT) <= 0) return stored;
  h5::Id group = h5::group(H5Gopen2(file.get(), kOutputGroup, H5P_DEFAULT));
  if (!group) return stored;
  const auto read = [&](const char* name) -> std::string {
    if (H5Aexists(group.get(), name) <= 0) return {};
    try {
      return h5::read_string_attribute(group.get(), name);
    } catch (const Error&) { return {}; }
  };
  stored.fingerprint = read("fingerprint");
  stored.identity = read("identity");
  stored.chunk_axis = read("chunk_axis");
  stored.parts_folder = read("parts_folder");
  return stored;
}

ExistingOutput inspect_output(const std::string& path) {
  ExistingOutput existing;
  if (path.empty()) return existing;
  existing.partial = stored_output(path + ".partial");
  existing.finished = stored_output(path);
  return existing;
}

namespace {

// The file whose record a new run follows: the partial when there is one,
// else (without overwrite) the finished output; null with restart or neither.
const StoredOutput* recorded_file(const ExistingOutput& existing, bool overwrite, bool restart, std::string& where) {
  if (restart) return nullptr;
  if (existing.partial.exists) {
    where = "the existing partial";
    return &existing.partial;
  }
  if (!overwrite && existing.finished.exists) {
    where = "the finished output";
    return &existing.finished;
  }
  return nullptr;
}

}  // namespace

std::optional<RecordedChunkAxis> recorded_chunk_axis(const ExistingOutput& existing, bool overwrite, bool restart) {
  std::string where;
  const StoredOutput* file = recorded_file(existing, overwrite, restart, where);
  if (!file) return std::nullopt;
  if (file->chunk_axis == "date") return RecordedChunkAxis{Axis::date, where};
  if (file->chunk_axis == "id") return RecordedChunkAxis{Axis::id, where};
  return std::nullopt;
}

std::optional<RecordedLayout> recorded_layout(const ExistingOutput& existing, bool overwrite, bool restart) {
  std::string where;
  const StoredOutput* file = recorded_file(existing, overwrite, restart, where);
  // Only an output with discount_app's record (its identity) says how it was written.
  if (!file || file->identity.empty()) return std::nullopt;
  return RecordedLayout{!file->parts_folder.empty(), where};
}

std::optional<RecordedChunkAxis> recorded_chunk_axis(const std::string& path, bool overwrite, bool restart) {
  if (restart || path.empty()) return std::nullopt;
  return recorded_chunk_axis(inspect_output(path), overwrite, restart);
}

}  // namespace discount
