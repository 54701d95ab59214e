// FileOutput's run record (io/records/run_table.hpp): the owner rank's record of each
// run in the output's run table, and the runs the output holds, read back.
#include <fcntl.h>
#include <unistd.h>

#include "io/output/output.hpp"
#include "io/records/run_table.hpp"

namespace discount {

// The owner (rank 0), after every rank's work of this run is durable and recorded (the
// ranks have combined their reports): the run record's end.
void FileOutput::stamp_run_record() const {
  if (state_ == State::already_complete || !spec_.owner || runs_offset_ == 0) return;
  UniqueFd fd(::open(partial_path().c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) return;  // the record keeps its last checkpoint's end
  write_run_record(fd.get());
  ::fdatasync(fd.get());
}

// The owner's record of this run, in its slot of the run table.
void FileOutput::write_run_record(int fd) const {
  if (!spec_.owner || runs_offset_ == 0 || fd < 0) return;
  RunRecord record;
  record.run = run_;
  record.ranks = spec_.ranks;
  record.start_time = run_start_utc_;
  record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
  write_run_entry(fd, runs_offset_, record, partial_path());
}

std::optional<RunHistory> FileOutput::run_history() const {
  RunHistory history;
  history.unit_axis = axis_name(spec_.chunk_axis);
  // A run given up for bad input data may still have its compressing thread
  // (HDF5 is not thread-safe).
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  h5::QuietErrors quiet;
  const std::string path = published_ ? spec_.path : partial_path();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file) return history;
  RecordLayout layout;
  if (!record_damage(file.get(), spec_, file_size(path), layout).empty()) return history;
  history.units = unit_count();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return history;
  const RangeTable done = read_table(fd.get(), layout, path);
  for (const auto& range : done.slots())
    if (range && range->end <= history.units) history.ranges.push_back({range->begin, range->end, range->run});
  history.records = read_run_records(file.get());
  return history;
}

}  // namespace discount
