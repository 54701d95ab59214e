// The `.partial`'s record on disk (io/records/unit_record.hpp says what it holds):
// its HDF5 datasets, created once with the file and afterwards read and
// written only as raw bytes at their fixed offsets; the check of the
// partial's structure before a resume; and the re-reading of done ranges
// (output bytes, input bytes) against their checksums.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/records/output_spec.hpp"
#include "io/records/unit_record.hpp"

namespace discount {

constexpr const char* kRangesDataset = "discount_app/done_ranges";
constexpr const char* kInputFileDataset = "discount_app/input_file";
// The per-unit progress bytes of earlier versions: such a partial is refused.
constexpr const char* kOldProgressDataset = "discount_app/progress";

// Where the record and the data lie in the file.
struct RecordLayout {
  std::uint64_t data_offset = 0, ranges_offset = 0, file_id_offset = 0;
  std::size_t capacity = 0;
};

// Creates the two record datasets (zeroed, contiguous, allocated now) in a
// file being created; false when HDF5 refuses.
bool create_record(hid_t file, std::size_t capacity);

// The partial's structure as a resume needs it: the result dataset float64
// little-endian, of the job's shape, contiguous and allocated, and the record
// datasets of their fixed types and sizes, each inside the file and apart.
// Fills `layout`; returns what is damaged ("dataset cv has type float64
// big-endian, expected float64 little-endian"), or empty.
std::string record_damage(hid_t file, const OutputSpec& spec, std::uint64_t file_size, RecordLayout& layout);

// True when the file has the per-unit progress record of an earlier version.
bool has_old_progress(hid_t file);

RangeTable read_table(int fd, const RecordLayout& layout, const std::string& path);
std::optional<InputFileId> read_file_id(int fd, const RecordLayout& layout);
// One slot (nullopt: emptied) and the file identity, in place.
void write_slot(int fd, const RecordLayout& layout, std::size_t slot, const std::optional<DoneRange>& range,
                const std::string& path);
void write_file_id(int fd, const RecordLayout& layout, const InputFileId& id, const std::string& path);

// stat() of the input file; all zero for none (synthetic input).
InputFileId input_file_id(const std::string& path);
// The input's identity: input_file_id of input.file, or for a list one
// identity folded from every listed file's, so that a change to any of them
// shows.
InputFileId input_files_id(const OutputSpec& spec);
// How a resume's messages name the input: "input.file 'a.h5'", or for a list
// "input.file list ('a.h5' and 3 more)".
std::string input_files_text(const OutputSpec& spec);

// Reads units [begin, end) of the chunk axis (inside one data file) packed
// into the buffer.
using UnitReader = std::function<void(Range units, double* buffer)>;

// The slots whose output bytes, re-read through `read`, do not match their
// checksum. Reads in pieces of at most `piece_bytes` (at least one unit),
// cut at `bounds` (the data files' unit bounds).
std::vector<std::size_t> failed_output_sums(const OutputSpec& spec, const RangeTable& table, std::uint64_t piece_bytes,
                                            const std::vector<std::int64_t>& bounds, const UnitReader& read);

// The slots whose input, read again through spec.input_sums, does not match
// the checksums recorded with them (entries without input sums count as
// failed).
std::vector<std::size_t> failed_input_sums(const OutputSpec& spec, const RangeTable& table);

// The file's size in bytes (0: cannot stat it).
std::uint64_t file_size(const std::string& path);
// "20 date(s)"
std::string units_text(std::int64_t n, Axis axis);

// The units of the slots, added up.
std::int64_t units_of_slots(const RangeTable& table, const std::vector<std::size_t>& slots);

}  // namespace discount
