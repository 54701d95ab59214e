#include "io/records/progress_record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

ProgressRecord::ProgressRecord(const OutputSpec& spec, std::string path) : spec_(spec), path_(std::move(path)) {}

ProgressRecord::~ProgressRecord() { close(); }

std::int64_t ProgressRecord::unit_count() const { return spec_.chunk_axis == Axis::date ? spec_.dates : spec_.ids; }

void ProgressRecord::start_empty(std::size_t capacity) {
  table_ = RangeTable(capacity);
  free_slots_.clear();
  own_slots_.clear();
}

void ProgressRecord::load(int fd) {
  table_ = read_table(fd, layout_, path_);
  std::vector<std::size_t> outside;  // a range past the chunk axis: damaged
  for (std::size_t s = 0; s < table_.capacity(); ++s)
    if (table_.slots()[s] && table_.slots()[s]->end > unit_count()) outside.push_back(s);
  if (!outside.empty()) drop_slots(fd, outside);
}

void ProgressRecord::drop_slots(int fd, const std::vector<std::size_t>& slots) {
  auto kept = table_.slots();
  for (auto s : slots) kept[s].reset();
  if (!spec_.attach) {
    for (auto s : slots) write_slot(fd, layout_, s, std::nullopt, path_);
    if (::fdatasync(fd) != 0) throw io_error("flushing '" + path_ + "': " + std::strerror(errno));
  }
  table_ = RangeTable(std::move(kept));
}

// Every rank reads the same table once the owner has checked it, and takes
// every ranks-th empty slot.
void ProgressRecord::share_free_slots() {
  const auto free = table_.free_slots();
  free_slots_.clear();
  scarce_at_ = table_.coverage().size() + 2;
  for (std::size_t j = static_cast<std::size_t>(spec_.rank); j < free.size();
       j += static_cast<std::size_t>(spec_.ranks))
    free_slots_.push_back(free[j]);
  std::reverse(free_slots_.begin(), free_slots_.end());  // taken from the back, lowest first
}

void ProgressRecord::open() {
  close();
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) throw create_error("cannot open '" + path_ + "' for writing: " + std::strerror(errno));
}

bool ProgressRecord::sync_and_close() {
  if (fd_ < 0) return false;
  if (::fsync(fd_) != 0) throw io_error("flushing '" + path_ + "': " + std::strerror(errno));
  close();
  return true;
}

void ProgressRecord::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ProgressRecord::set_hooks(std::function<void()> sync_data, std::function<void()> after) {
  sync_data_ = std::move(sync_data);
  after_checkpoint_ = std::move(after);
}

void ProgressRecord::add(const DoneRange& done) {
  std::lock_guard<std::mutex> lock(mutex_);
  unrecorded_.push_back(done);
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_checkpoint_).count() >= spec_.checkpoint_seconds) checkpoint_locked();
}

void ProgressRecord::checkpoint() {
  std::lock_guard<std::mutex> lock(mutex_);
  checkpoint_locked();
}

// Data first, durable; only then the entries that vouch for it (each one
// valid only once whole: unit_record.hpp). A writer marks its file dirty
// before it queues its range here, so every range below is covered.
// Entries stay small (a failed checksum redoes one), until this rank's
// empty slots run short: then a range that continues one it recorded in
// this run extends it in place, so the run needs at most one new entry per
// stretch of slabs still to do.
void ProgressRecord::checkpoint_locked() {
  last_checkpoint_ = std::chrono::steady_clock::now();
  if (unrecorded_.empty()) return;
  if (sync_data_) sync_data_();
  const bool scarce = free_slots_.size() <= scarce_at_;
  const std::int64_t most = scarce ? unit_count() : entry_units(unit_count(), table_.capacity());
  for (const DoneRange& range : coalesce(std::move(unrecorded_), spec_.chunk_axis == Axis::id, most)) {
    const auto [slot, entry] = place(range, scarce);
    write_slot(fd_, layout_, slot, entry, path_);
    table_.set(slot, entry);
  }
  unrecorded_.clear();
  if (after_checkpoint_) after_checkpoint_();
}

std::pair<std::size_t, DoneRange> ProgressRecord::place(const DoneRange& range, bool scarce) {
  const bool mult_per_unit = spec_.chunk_axis == Axis::id;
  if (scarce)
    for (auto s : own_slots_)
      if (const auto entry = merged(*table_.slots()[s], range, mult_per_unit)) return {s, *entry};
  if (free_slots_.empty())
    throw io_error("the progress record of '" + path_ + "' is full (" + std::to_string(table_.capacity()) +
                   " ranges); run the same command again to resume");
  const std::size_t slot = free_slots_.back();
  free_slots_.pop_back();
  own_slots_.push_back(slot);
  return {slot, range};
}

// Every rank's done ranges, as the file holds them: a unit missing here
// is a bug in the slab distribution, and the result stays partial.
void ProgressRecord::check_all_done() const {
  h5::QuietErrors quiet;
  const RangeTable table = [&] {
    UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) throw io_error("cannot read the progress record of '" + path_ + "'");
    return read_table(fd.get(), layout_, path_);
  }();
  const std::int64_t units = unit_count();
  const std::int64_t missing = units - (table.covers(0, units) ? units : table.units_covered());
  if (missing > 0)
    throw internal_error("'" + path_ + "': " + std::to_string(missing) + " " + axis_name(spec_.chunk_axis) +
                         "(s) not recorded as done at the end of the run; the partial is kept, rerun to finish it");
}

// A run adds at most one range per stretch of slabs still to do (each
// checkpoint extends it), per rank.
void ProgressRecord::check_room() const {
  const std::size_t free = table_.free_slots().size();
  const std::size_t need = static_cast<std::size_t>(spec_.ranks) * (table_.coverage().size() + 2);
  if (free < need)
    throw create_error("'" + path_ + "' has room for " + std::to_string(free) + " more done range(s) in its record (" +
                       std::to_string(table_.capacity()) + "), and this run could need " + std::to_string(need) +
                       "; rerun with --restart to start over");
}

}  // namespace discount
