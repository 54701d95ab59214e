// The data files of one output and where each range of units lies: the
// master's own dataset (single layout), or the split layout's parts in their
// folder (output_parts.hpp), with the part bounds along the chunk axis. It
// creates a fresh part set, adopts the one a partial records, opens the
// files for writing or reading, writes a slab's box across them, reads units
// back, and removes part sets this output no longer names.
#pragma once

#include <fcntl.h>
#include <hdf5.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/input/input.hpp"
#include "io/records/data_file.hpp"
#include "io/records/output_spec.hpp"

namespace discount {

class PartSet {
 public:
  // The data files of `spec`'s output, whose master is `master` (the
  // partial). The spec is held by reference: it outlives the set.
  PartSet(const OutputSpec& spec, std::string master);

  // The single layout: one data file, the master's dataset.
  void use_single();
  // A fresh split layout: bounds for `data_bytes` of output, a new folder
  // with its record and contiguous parts, durable. Returns the folder's name
  // (relative to the master's directory); nothing is left behind on failure.
  std::string create_split(std::uint64_t data_bytes);
  // The split layout a master records in its group `group` (its
  // parts_folder and part_bounds attributes); false when unreadable.
  bool adopt(hid_t group);

  // Opens the data files (the master's dataset at `data_offset`, or each
  // part, checked to be the part the master maps); create_error when one
  // is missing or damaged.
  void open(std::uint64_t data_offset, int flags = O_RDWR);
  // O_DIRECT writers on the open files, their bounce buffers sized for `writers`.
  void open_direct(int writers);
  // Makes the files written since the last call durable (fdatasync).
  void sync_dirty();
  // fsync of every file, O_DIRECT writers closed; then the files are closed.
  void sync_and_close();
  void close() {
    std::lock_guard<std::mutex> lock(files_mutex_);
    files_.clear();
  }

  bool split() const { return !folder_.empty(); }
  const std::string& folder() const { return folder_; }
  const std::vector<std::int64_t>& bounds() const { return bounds_; }
  std::size_t parts() const { return bounds_.size() - 1; }
  std::size_t size() const { return files_.size(); }
  DataFile& file(std::size_t f) { return *files_[f]; }
  const DataFile& file(std::size_t f) const { return *files_[f]; }
  // The data file that holds `unit`, its extents, and a part's path.
  std::size_t file_of(std::int64_t unit) const;
  std::array<std::int64_t, 3> part_dims(std::size_t f) const;
  std::string part_path(std::size_t f) const;
  // The chunk axis's position in the output's axes.
  int chunk_position() const;

  // Writes units [b, e) of the slab's packed `buffer` (its box `box` in
  // the whole output) into the files that hold them; a file's share of a
  // slab across a part's edge is packed on its own.
  void write(const FileBox& box, std::int64_t b, std::int64_t e, const void* buffer, std::size_t element,
             const PieceHook& hook = {});
  // Sends the page-cache writes of units [b, e) to the device (spec.writeback).
  void write_back(std::int64_t b, std::int64_t e);
  // Reads units [begin, end) (inside one file) as stored: float32 packed in
  // the buffer's first half.
  void read_units(Range units, double* buffer) const;
  // Round robin over the files: the k-th pending slab of every file, then
  // the (k+1)-th, so that slabs in flight together go to different files.
  std::vector<int> write_order(const std::vector<int>& pending) const;
  // Closes this process's handles on part f (it is about to be replaced;
  // nothing writes it any more). Safe beside sync_dirty and sync_and_close.
  void release(std::size_t f);

  // Each part's identity (part_identity), one line per part.
  std::string identities() const;
  // The parts whose identity is not the one on their line of `recorded`;
  // `damage` says what is wrong with a part that is missing or misshapen.
  std::vector<std::size_t> changed_parts(const std::string& recorded, std::string& damage) const;
  // Part folders of this output other than this set's and `keep`'s,
  // removed (part_record.hpp: only those whose record names them).
  void remove_stale(const std::string& keep) const;
  // This set's folder and files.
  void remove() const;

 private:
  std::int64_t unit_count() const;
  void open_part(DataFile& file) const;

  const OutputSpec& spec_;
  const std::string master_;
  std::vector<std::int64_t> bounds_;  // data file f holds units [bounds_[f], bounds_[f+1])
  std::string folder_;                // split: the folder's path (empty for single)
  std::vector<std::unique_ptr<DataFile>> files_;
  std::mutex files_mutex_;  // release (a compressing thread) against syncs and closes
};

}  // namespace discount
