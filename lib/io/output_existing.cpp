#include "io/output_existing.hpp"

#include <sys/stat.h>

#include "common/error.hpp"
#include "io/hdf5_handle.hpp"

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
    } catch (const Error&) {
      return {};
    }
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

std::optional<RecordedChunkAxis> recorded_chunk_axis(const ExistingOutput& existing, bool overwrite, bool restart) {
  if (restart) return std::nullopt;
  const auto axis_of = [](const std::string& text) -> std::optional<Axis> {
    if (text == "date") return Axis::date;
    if (text == "id") return Axis::id;
    return std::nullopt;
  };
  if (existing.partial.exists) {
    if (const auto axis = axis_of(existing.partial.chunk_axis)) return RecordedChunkAxis{*axis, "the existing partial"};
    return std::nullopt;
  }
  if (!overwrite && existing.finished.exists)
    if (const auto axis = axis_of(existing.finished.chunk_axis)) return RecordedChunkAxis{*axis, "the finished output"};
  return std::nullopt;
}

std::optional<RecordedChunkAxis> recorded_chunk_axis(const std::string& path, bool overwrite, bool restart) {
  if (restart || path.empty()) return std::nullopt;
  return recorded_chunk_axis(inspect_output(path), overwrite, restart);
}

}  // namespace discount
