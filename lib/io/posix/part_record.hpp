// The record a split output's part folder carries (`discount_app-parts.txt`):
// the output it belongs to, the folder's own name and the part files it
// holds. Cleanup removes a folder beside the output only when its record
// names this output and this folder, and then only the files it lists; a
// folder without such a record (a user's, another output's, a symlink, a
// damaged record) is left alone. No HDF5 here.
//
// The format, one item per line, names percent-encoded (any byte but
// [A-Za-z0-9._-] as %XX):
//   discount_app part set 1
//   output <base name of the output>
//   folder <base name of the folder>
//   part part-00000.h5        (one line per part file)
//   end <number of part lines>
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace discount {

constexpr const char* kPartRecordName = "discount_app-parts.txt";

struct PartRecord {
  std::string output;              // the output's base name
  std::string folder;              // the folder's base name
  std::vector<std::string> parts;  // part file names in the folder
};

// The record's text, and its reading; nullopt with `damage` saying why.
std::string part_record_text(const PartRecord& record);
std::optional<PartRecord> parse_part_record(const std::string& text, std::string& damage);

// Writes the record into `folder` (a new folder of this run), durably.
// Throws create_error when it cannot.
void write_part_record(const std::string& folder, const PartRecord& record);

// Removes the part set at `folder` if its record names `out_base` and the
// folder's own name: the listed regular files, the record, then the folder
// when empty. Never follows a symlink (the folder itself or an entry in it).
// Returns "" when removed, else why it was left alone, for a warning.
std::string remove_part_set(const std::string& folder, const std::string& out_base);

}  // namespace discount
