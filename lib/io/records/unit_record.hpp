// The record of what a `.partial` holds (docs/architecture.md): a table of
// fixed capacity, allocated at creation, of done RANGES along the chunk axis,
// each with the run that wrote it and checksums of its output bytes and of
// the input bytes it was computed from; and the input file's identity. Its
// size grows with the plan's slab count, never with ids or dates. Entries are
// 64 bytes written in place; one is valid only when its last word is the
// checksum of the rest, so a torn or never-finished write reads as empty.
// Pure: encoding, coverage, coalescing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace discount {

constexpr std::size_t kEntryBytes = 64;

struct DoneRange {
  std::int64_t begin = 0, end = 0;  // [begin, end) along the chunk axis, relative to the selection
  std::int32_t run = 0;             // the run that wrote it (1, 2, ...)
  std::uint32_t flags = 0;          // kHasInputSums
  std::uint64_t out_sum = 0;        // io/records/checksum.hpp over the range's cv
  std::uint64_t in_disc = 0;        // ... over the discount bytes it was computed from
  std::uint64_t in_mult = 0;        // ... over the multBy rows it used
  bool operator==(const DoneRange& o) const {
    return begin == o.begin && end == o.end && run == o.run && flags == o.flags && out_sum == o.out_sum &&
           in_disc == o.in_disc && in_mult == o.in_mult;
  }
};
constexpr std::uint32_t kHasInputSums = 1;

// The input file as stat() saw it when the record was last checked against it.
struct InputFileId {
  std::uint64_t dev = 0, ino = 0, size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const InputFileId& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns;
  }
  bool operator!=(const InputFileId& o) const { return !(*this == o); }
};
// What differs between two identities, in words ("another file (inode 12, was 7)", "a newer time stamp").
std::string file_id_change(const InputFileId& was, const InputFileId& now);

// FNV-1a 64 of bytes [0, n), never 0: an entry's last word.
std::uint64_t record_commit(const std::uint8_t* bytes, std::size_t n);
void encode_range(const DoneRange& range, std::uint8_t* out);   // kEntryBytes
std::optional<DoneRange> decode_range(const std::uint8_t* in);  // nullopt: empty, torn or damaged
void encode_file_id(const InputFileId& id, std::uint8_t* out);  // kEntryBytes
std::optional<InputFileId> decode_file_id(const std::uint8_t* in);

// a then b as one range: adjacent (a.end == b.begin), same run and flags.
// Sums add; in_mult adds when each unit brings its own multBy rows (id
// chunks) and must be equal otherwise (date chunks all use the whole multBy).
std::optional<DoneRange> merged(const DoneRange& a, const DoneRange& b, bool mult_per_unit);

// Ranges written since the last checkpoint, sorted and merged where merged()
// allows and the result spans at most `max_units` units (a finer record
// redoes less when a range's checksum fails).
std::vector<DoneRange> coalesce(std::vector<DoneRange> written, bool mult_per_unit, std::int64_t max_units);

// The most units one entry spans while the table has room: a quarter of the
// capacity covers every unit (a slab larger than that is still one entry).
std::int64_t entry_units(std::int64_t units, std::size_t capacity);

// The table's capacity for a plan of `slabs` slabs: 4 per slab, at least
// 1024 and at most 65536 entries (4 MiB).
std::size_t table_capacity(std::int64_t slabs);

using Span = std::pair<std::int64_t, std::int64_t>;  // [begin, end)

// The slots of the table as read back; coverage answers which units are done.
class RangeTable {
 public:
  RangeTable() = default;
  explicit RangeTable(std::size_t capacity) : slots_(capacity) {}
  explicit RangeTable(std::vector<std::optional<DoneRange>> slots) : slots_(std::move(slots)) { update(); }
  std::size_t capacity() const { return slots_.size(); }
  const std::vector<std::optional<DoneRange>>& slots() const { return slots_; }
  void set(std::size_t slot, std::optional<DoneRange> range);
  // The union of the valid ranges: sorted, disjoint, not touching.
  const std::vector<Span>& coverage() const { return coverage_; }
  // Every unit of [begin, end) lies in a valid range.
  bool covers(std::int64_t begin, std::int64_t end) const;
  std::int64_t units_covered() const;
  std::vector<std::size_t> free_slots() const;
  std::size_t valid() const;

 private:
  void update();
  std::vector<std::optional<DoneRange>> slots_;
  std::vector<Span> coverage_;
};

}  // namespace discount
