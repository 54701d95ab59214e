#include "io/records/part_set.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/error.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/records/output_parts.hpp"
#include "io/records/part_compress.hpp"
#include "io/posix/box.hpp"
#include "io/posix/part_record.hpp"

namespace discount {

PartSet::PartSet(const OutputSpec& spec, std::string master) : spec_(spec), master_(std::move(master)) { use_single(); }

std::int64_t PartSet::unit_count() const { return spec_.chunk_axis == Axis::date ? spec_.dates : spec_.ids; }

int PartSet::chunk_position() const {
  return static_cast<int>(std::find(spec_.axes.begin(), spec_.axes.end(), spec_.chunk_axis) - spec_.axes.begin());
}

void PartSet::use_single() {
  bounds_ = {0, unit_count()};
  folder_.clear();
  files_.clear();
}

std::string PartSet::create_split(std::uint64_t data_bytes) {
  // The parts first, durable, in a folder no master names yet: a kill
  // before the master is renamed leaves only a folder a later run removes.
  const int count = spec_.parts > 0 ? spec_.parts
                                    : auto_parts(data_bytes, std::max(1u, std::thread::hardware_concurrency()),
                                                 memory_backed(dir_of(spec_.path)));
  bounds_ = part_bounds(spec_.slab_units.empty() ? std::vector<Range>{{0, unit_count()}} : spec_.slab_units,
                        unit_count(), count);
  const std::string name = new_parts_folder_name(spec_.path);
  folder_ = dir_of(spec_.path) + "/" + name;
  if (::mkdir(folder_.c_str(), 0755) != 0)
    throw create_error("cannot create the part folder '" + folder_ + "': " + std::strerror(errno));
  // The record first: it names this output and every part, so that only
  // this set is ever removed as this output's (io/posix/part_record.hpp).
  PartRecord record{base_name(spec_.path), name, {}};
  for (std::size_t p = 0; p < parts(); ++p) record.parts.push_back(part_file_name(p));
  try {
    write_part_record(folder_, record);
  } catch (...) {
    ::rmdir(folder_.c_str());
    throw;
  }
  try {
    for (std::size_t p = 0; p < parts(); ++p) create_part_file(part_path(p), part_dims(p), spec_.dtype);
  } catch (...) {
    remove();
    throw;
  }
  fsync_dir(folder_);
  return name;
}

bool PartSet::adopt(hid_t group) {
  use_single();
  std::string folder, bounds;
  try {
    folder = h5::read_string_attribute(group, "parts_folder");
    bounds = h5::read_string_attribute(group, "part_bounds");
  } catch (const Error&) { return false; }
  bounds_ = parse_bounds(bounds, unit_count());
  if (folder.empty() || folder.find('/') != std::string::npos || bounds_.empty()) return false;
  folder_ = dir_of(spec_.path) + "/" + folder;
  return true;
}

std::array<std::int64_t, 3> PartSet::part_dims(std::size_t f) const {
  auto dims = discount_box({spec_.dates, spec_.ids, spec_.nums}, spec_.axes, {0, spec_.dates}, {0, spec_.ids}).dims;
  dims[chunk_position()] = bounds_[f + 1] - bounds_[f];
  return dims;
}

std::string PartSet::part_path(std::size_t f) const { return folder_ + "/" + part_file_name(f); }

std::size_t PartSet::file_of(std::int64_t unit) const {
  const auto it = std::upper_bound(bounds_.begin(), bounds_.end(), unit);
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, it - bounds_.begin() - 1));
}

void PartSet::open(std::uint64_t data_offset, int flags) {
  files_.clear();
  for (std::size_t f = 0; f < parts(); ++f) {
    auto file = std::make_unique<DataFile>();
    file->units = {bounds_[f], bounds_[f + 1]};
    file->dims = part_dims(f);
    file->path = split() ? part_path(f) : master_;
    file->offset = data_offset;
    if (split()) open_part(*file);
    file->fd = UniqueFd(::open(file->path.c_str(), flags | O_CLOEXEC));
    if (file->fd.get() < 0)
      throw create_error("cannot open '" + file->path + (flags == O_RDONLY ? "'" : "' for writing") + ": " +
                         std::strerror(errno));
    files_.push_back(std::move(file));
  }
}

// A part: the dataset's offset, checked against the shape the master maps;
// a compressed part is opened through HDF5 for reading.
void PartSet::open_part(DataFile& file) const {
  std::string damage;
  file.offset = part_offset(file.path, file.dims, spec_.dtype, damage, &file.compressed);
  if (!damage.empty()) throw create_error("'" + master_ + "' is damaged: " + damage + "; rerun with --restart");
  if (!file.compressed) return;
  register_codec_filters();
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  h5::QuietErrors quiet;
  file.h5_file = h5::file(H5Fopen(file.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (file.h5_file) file.h5_data = h5::dataset(H5Dopen2(file.h5_file.get(), kPartDataset, H5P_DEFAULT));
  if (!file.h5_data)
    throw create_error("'" + master_ + "' is damaged: its compressed part '" + file.path +
                       "' cannot be opened; rerun with --restart");
}

// Bounce buffers: the budget pays for one set per writer (resolve), so with
// more parts than writers each part's set is that much smaller.
void PartSet::open_direct(int writers) {
  const std::uint64_t piece = std::max(DirectWriter::kAlign, spec_.direct_piece * static_cast<std::uint64_t>(writers) /
                                                                 std::max<std::uint64_t>(1, files_.size()) /
                                                                 DirectWriter::kAlign * DirectWriter::kAlign);
  for (auto& f : files_) {
    f->direct = std::make_unique<DirectWriter>(f->path, piece);
    // Parts on a memory-backed file system take plain pwrite (one thread per
    // part: pwrite_runs): with several writers it beat the mapped copy 8.2 s
    // to 4.9 s for 20 GB on the H200 node's /dev/shm (the mapped copy stays
    // the one file's faster path).
    if (files_.size() > 1 && f->direct->memory_backed()) f->direct.reset();
  }
}

void PartSet::sync_dirty() {
  std::lock_guard<std::mutex> lock(files_mutex_);
  for (auto& f : files_)
    if (f->dirty.exchange(false) && ::fdatasync(f->fd.get()) != 0)
      throw io_error("flushing '" + f->path + "': " + std::strerror(errno));
}

void PartSet::sync_and_close() {
  std::lock_guard<std::mutex> lock(files_mutex_);
  for (auto& f : files_) {
    if (f->fd.get() >= 0 && ::fsync(f->fd.get()) != 0)
      throw io_error("flushing '" + f->path + "': " + std::strerror(errno));
    if (f->direct) f->direct->close();
  }
  files_.clear();
}

namespace {

// The box of `count` at `offset` inside a packed box of `whole`, packed on its own.
void pack_share(const unsigned char* bytes, const std::array<std::int64_t, 3>& whole,
                const std::array<std::int64_t, 3>& offset, const std::array<std::int64_t, 3>& count,
                std::size_t element, std::vector<unsigned char>& piece) {
  piece.resize(static_cast<std::size_t>(count[0] * count[1] * count[2]) * element);
  const auto row = static_cast<std::size_t>(count[2]) * element;
  for (std::int64_t i = 0; i < count[0]; ++i)
    for (std::int64_t j = 0; j < count[1]; ++j)
      std::memcpy(
          piece.data() + static_cast<std::size_t>(i * count[1] + j) * row,
          bytes +
              static_cast<std::size_t>(((i + offset[0]) * whole[1] + j + offset[1]) * whole[2] + offset[2]) * element,
          row);
}

}  // namespace

void PartSet::write(const FileBox& box, std::int64_t b, std::int64_t e, const void* buffer, std::size_t element,
                    const PieceHook& hook) {
  const int k = chunk_position();
  std::vector<unsigned char> piece;
  for (std::size_t f = file_of(b); f < files_.size() && files_[f]->units.begin < e; ++f) {
    DataFile& file = *files_[f];
    const std::int64_t from = std::max(b, file.units.begin), to = std::min(e, file.units.end);
    auto start = box.start, count = box.count;
    start[k] = from - file.units.begin;
    count[k] = to - from;
    const void* data = buffer;
    if (from != b || to != e) {
      // A slab across a part's edge (a resume whose plan cut slabs
      // differently): this part's share, packed on its own.
      std::array<std::int64_t, 3> offset{0, 0, 0};
      offset[k] = from - b;
      pack_share(static_cast<const unsigned char*>(buffer), box.count, offset, count, element, piece);
      data = piece.data();
    }
    file.write_box(start, count, data, element, hook);
  }
}

// Page-cache writes go to the device from here on, while the job streams:
// the kernel would start only past its dirty threshold (a tenth of memory),
// which leaves a job under it the whole write-out at its final fdatasync.
void PartSet::write_back(std::int64_t b, std::int64_t e) {
  if (!spec_.writeback) return;
  for (std::size_t f = file_of(b); f < files_.size() && files_[f]->units.begin < e; ++f)
    if (files_[f]->page_cache()) start_writeback(files_[f]->fd.get());
}

void PartSet::read_units(Range units, double* buffer) const {
  const DataFile& f = *files_[file_of(units.begin)];
  const bool by_date = spec_.chunk_axis == Axis::date;
  const Range local{units.begin - f.units.begin, units.end - f.units.begin};
  const Range other{0, by_date ? spec_.ids : spec_.dates};
  const auto shape =
      InputShape{by_date ? f.units.size() : spec_.dates, by_date ? spec_.ids : f.units.size(), spec_.nums};
  const FileBox box = discount_box(shape, spec_.axes, by_date ? local : other, by_date ? other : local);
  const std::string what = "re-reading the done ranges recorded for '" + f.path + "'";
  if (f.compressed)
    read_compressed_part(f.h5_data.get(), spec_.dtype, box.start, box.count, buffer, what);
  else
    pread_runs(f.fd.get(), f.offset, box_runs(box.dims, box.start, box.count), buffer, stored_bytes(spec_.dtype), what);
}

std::vector<int> PartSet::write_order(const std::vector<int>& pending) const {
  if (files_.size() <= 1 || spec_.slab_units.empty()) return pending;
  std::vector<std::vector<int>> by_file(files_.size());
  for (int s : pending) by_file[file_of(spec_.slab_units[static_cast<std::size_t>(s)].begin)].push_back(s);
  std::vector<int> order;
  for (std::size_t k = 0; order.size() < pending.size(); ++k)
    for (const auto& slabs : by_file)
      if (k < slabs.size()) order.push_back(slabs[k]);
  return order;
}

void PartSet::release(std::size_t f) {
  std::lock_guard<std::mutex> lock(files_mutex_);
  if (f >= files_.size()) return;
  files_[f]->direct.reset();
  files_[f]->fd.reset();
}

std::string PartSet::identities() const {
  std::string text;
  for (std::size_t f = 0; f < parts(); ++f) text += part_identity(part_path(f)) + "\n";
  return text;
}

std::vector<std::size_t> PartSet::changed_parts(const std::string& recorded, std::string& damage) const {
  std::vector<std::string> ids;
  std::istringstream in(recorded);
  for (std::string line; std::getline(in, line);) ids.push_back(line);
  std::vector<std::size_t> changed;
  for (std::size_t f = 0; f < parts(); ++f) {
    bool compressed = false;
    part_offset(part_path(f), part_dims(f), spec_.dtype, damage, &compressed);
    if (!damage.empty()) return changed;
    if (f >= ids.size() || ids[f] != part_identity(part_path(f))) changed.push_back(f);
  }
  return changed;
}

// Left by a kill between a part set's creation and its master's rename, or
// by an overwrite killed before it removed the set it replaced. Only a
// folder whose record names this output and the folder itself is removed,
// and only the files it lists; other folders named like ours are left
// alone with a warning.
void PartSet::remove_stale(const std::string& keep) const {
  const std::string dir = dir_of(spec_.path), base = base_name(spec_.path);
  std::vector<std::string> stale;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (!is_parts_folder_of(name, base) || name == keep || name == base_name(folder_)) continue;
      stale.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  std::sort(stale.begin(), stale.end());
  for (const auto& path : stale) remove_part_set_or_warn(path, spec_.path);
}

void PartSet::remove() const {
  if (split()) remove_part_set_or_warn(folder_, spec_.path);
}

}  // namespace discount
