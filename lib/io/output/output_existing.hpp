// What an existing output and its `.partial` record about themselves, read
// once per run: the caller reads it to keep the chunk axis an earlier run
// chose (resolve), then hands the same reading to the file output.
#pragma once

#include <optional>
#include <string>

#include "config/config.hpp"

namespace discount {

// The discount_app group's attributes of one file; `exists` false when there
// is no such file. Empty strings where the file, group or attribute is not
// there (older files have no identity).
struct StoredOutput {
  bool exists = false;
  std::string fingerprint, identity, chunk_axis;
  std::string parts_folder;  // split layout: the part folder, relative to the file's directory
};

struct ExistingOutput {
  StoredOutput partial;   // `<path>.partial`
  StoredOutput finished;  // `<path>`
};

// Reads both files, each opened once (no lock held: the file output takes
// the lock before it acts on what was read).
ExistingOutput inspect_output(const std::string& path);

// The attributes of one file.
StoredOutput stored_output(const std::string& path);

// The chunk axis an earlier run of this output recorded, and where: the
// existing `<path>.partial` ("the existing partial"), or, with none there and
// output.overwrite off, the finished `<path>` ("the finished output"), so that
// memory.chunk_axis: auto resumes (or finds complete) what is there. Empty
// with restart, or when neither file records one.
struct RecordedChunkAxis {
  Axis axis = Axis::date;
  std::string where;
};
std::optional<RecordedChunkAxis> recorded_chunk_axis(const ExistingOutput& existing, bool overwrite, bool restart);
std::optional<RecordedChunkAxis> recorded_chunk_axis(const std::string& path, bool overwrite, bool restart);

// The layout an earlier run of this output used, from the same file and with
// the same rules as recorded_chunk_axis: split when its record names a part
// folder, single otherwise (output.layout: auto keeps it).
struct RecordedLayout {
  bool split = false;
  std::string where;
};
std::optional<RecordedLayout> recorded_layout(const ExistingOutput& existing, bool overwrite, bool restart);

// The discount_app group that holds the record and these attributes.
constexpr const char* kOutputGroup = "discount_app";

}  // namespace discount
