// The progress record of an output's `.partial` as one rank keeps it: the
// done-range table read from the file, this rank's share of its empty slots,
// the ranges written since the last checkpoint, and the checkpoint that makes
// them durable and records them (data first, then the entries that vouch for
// it). The file's structure is output_record.hpp's; what an entry holds is
// unit_record.hpp's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "io/records/output_record.hpp"
#include "io/records/output_spec.hpp"
#include "io/records/unit_record.hpp"

namespace discount {

class ProgressRecord {
 public:
  // The record of `spec`'s output in the file at `path` (the partial). The
  // spec is held by reference: it outlives the record.
  ProgressRecord(const OutputSpec& spec, std::string path);
  ~ProgressRecord();
  ProgressRecord(const ProgressRecord&) = delete;
  ProgressRecord& operator=(const ProgressRecord&) = delete;

  // Where the record lies in the file: filled by record_damage() at creation
  // or resume.
  RecordLayout& layout() { return layout_; }
  const RecordLayout& layout() const { return layout_; }
  const RangeTable& table() const { return table_; }
  // A fresh record: `capacity` empty slots.
  void start_empty(std::size_t capacity);
  // The table as the file at `fd` holds it; ranges past the chunk axis are dropped.
  void load(int fd);
  // Empties the slots, durably (not when attached to another rank's
  // partial), and forgets them.
  void drop_slots(int fd, const std::vector<std::size_t>& slots);
  // This rank's share of the empty slots: every ranks-th, from its rank.
  void share_free_slots();

  // Opens the file for the record's writes (create_error when it cannot).
  void open();
  int fd() const { return fd_; }
  // fsync and close; false when the file is not open.
  bool sync_and_close();
  void close();

  std::int64_t units_done() const { return table_.units_covered(); }
  bool covers(std::int64_t begin, std::int64_t end) const { return table_.covers(begin, end); }

  // What a checkpoint does around its own writes: `sync_data` makes the data
  // the queued ranges cover durable first; `after` runs once they are recorded.
  void set_hooks(std::function<void()> sync_data, std::function<void()> after);
  // A range written: queued, and recorded with the next checkpoint, which
  // runs now when output.checkpoint_seconds have passed since the last.
  void add(const DoneRange& done);
  void checkpoint();
  // Throws internal_error when the record on disk misses a unit.
  void check_all_done() const;
  // Throws create_error when the table has no room for what this run could add.
  void check_room() const;

 private:
  void checkpoint_locked();
  // The slot a coalesced range goes to, and the entry written there.
  std::pair<std::size_t, DoneRange> place(const DoneRange& range, bool scarce);
  std::int64_t unit_count() const;

  const OutputSpec& spec_;
  const std::string path_;
  int fd_ = -1;                          // the partial, for the record's writes
  RecordLayout layout_;                  // the record's offsets in the file
  RangeTable table_;                     // the done ranges as recorded
  std::vector<std::size_t> free_slots_;  // this rank's share of the empty slots (taken from the back)
  std::vector<std::size_t> own_slots_;   // the slots this rank filled in this run
  std::size_t scarce_at_ = 2;            // with this few empty slots left, entries extend
  std::mutex mutex_;                     // unrecorded_, the table, checkpoints: writers share them
  std::vector<DoneRange> unrecorded_;    // written, not yet durable
  std::chrono::steady_clock::time_point last_checkpoint_ = std::chrono::steady_clock::now();
  std::function<void()> sync_data_, after_checkpoint_;
};

}  // namespace discount
