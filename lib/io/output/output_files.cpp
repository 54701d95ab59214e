// FileOutput's data files: where each range of units' values lies (the
// master's own dataset, or a split output's parts), opened for writing, read
// back for a resume's checks, and the order and number of writers they take.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/error.hpp"
#include "io/posix/box.hpp"
#include "io/input/input.hpp"
#include "io/output/output.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/output/output_parts.hpp"
#include "io/output/part_compress.hpp"

namespace discount {

int FileOutput::chunk_axis_position() const {
  return static_cast<int>(std::find(spec_.axes.begin(), spec_.axes.end(), spec_.chunk_axis) - spec_.axes.begin());
}

std::array<std::int64_t, 3> FileOutput::part_dims(std::size_t f) const {
  auto dims = discount_box({spec_.dates, spec_.ids, spec_.nums}, spec_.axes, {0, spec_.dates}, {0, spec_.ids}).dims;
  dims[chunk_axis_position()] = bounds_[f + 1] - bounds_[f];
  return dims;
}

std::size_t FileOutput::file_of(std::int64_t unit) const {
  const auto it = std::upper_bound(bounds_.begin(), bounds_.end(), unit);
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, it - bounds_.begin() - 1));
}

// The data files, opened for writing: the master itself (single), or each
// part, checked to be the part the master maps (split).
void FileOutput::open_data_files(int flags) {
  files_.clear();
  for (std::size_t f = 0; f + 1 < bounds_.size(); ++f) {
    auto file = std::make_unique<DataFile>();
    file->units = {bounds_[f], bounds_[f + 1]};
    file->dims = part_dims(f);
    if (parts_folder_.empty()) {
      file->path = partial_path();
      file->offset = layout_.data_offset;
    } else {
      file->path = parts_folder_ + "/" + part_file_name(f);
      std::string damage;
      file->offset = part_offset(file->path, file->dims, spec_.dtype, damage, &file->compressed);
      if (!damage.empty())
        throw create_error("'" + partial_path() + "' is damaged: " + damage + "; rerun with --restart");
      if (file->compressed) {
        register_codec_filters();
        std::lock_guard<std::mutex> lock(h5::library_mutex());
        h5::QuietErrors quiet;
        file->h5_file = h5::file(H5Fopen(file->path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
        if (file->h5_file) file->h5_data = h5::dataset(H5Dopen2(file->h5_file.get(), kPartDataset, H5P_DEFAULT));
        if (!file->h5_data)
          throw create_error("'" + partial_path() + "' is damaged: its compressed part '" + file->path +
                             "' cannot be opened; rerun with --restart");
      }
    }
    file->fd = UniqueFd(::open(file->path.c_str(), flags | O_CLOEXEC));
    if (file->fd.get() < 0)
      throw create_error("cannot open '" + file->path + (flags == O_RDONLY ? "'" : "' for writing") + ": " +
                         std::strerror(errno));
    files_.push_back(std::move(file));
  }
}

void FileOutput::open_files() {
  fd_ = ::open(partial_path().c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) throw create_error("cannot open '" + partial_path() + "' for writing: " + std::strerror(errno));
  if (files_.empty()) open_data_files();
  // Bounce buffers: the budget pays for one set per writer (resolve), so with
  // more parts than writers each part's set is that much smaller.
  const std::uint64_t writers = static_cast<std::uint64_t>(writer_threads());
  const std::uint64_t piece =
      std::max(DirectWriter::kAlign, spec_.direct_piece * writers / std::max<std::uint64_t>(1, files_.size()) /
                                         DirectWriter::kAlign * DirectWriter::kAlign);
  if (!spec_.direct_io) return;
  for (auto& f : files_) {
    f->direct = std::make_unique<DirectWriter>(f->path, piece);
    // Parts on a memory-backed file system take plain pwrite (one thread per
    // part: pwrite_runs): with several writers it beat the mapped copy 8.2 s
    // to 4.9 s for 20 GB on the H200 node's /dev/shm (the mapped copy stays
    // the one file's faster path).
    if (files_.size() > 1 && f->direct->memory_backed()) f->direct.reset();
  }
}

void FileOutput::read_units(Range units, double* buffer) const {
  const DataFile& f = *files_[file_of(units.begin)];
  const bool by_date = spec_.chunk_axis == Axis::date;
  const Range local{units.begin - f.units.begin, units.end - f.units.begin};
  const Range other{0, by_date ? spec_.ids : spec_.dates};
  const auto shape =
      InputShape{by_date ? f.units.size() : spec_.dates, by_date ? spec_.ids : f.units.size(), spec_.nums};
  const FileBox box = discount_box(shape, spec_.axes, by_date ? local : other, by_date ? other : local);
  if (f.compressed) {
    read_compressed_part(f.h5_data.get(), spec_.dtype, box.start, box.count, buffer,
                         "re-reading the done ranges recorded for '" + f.path + "'");
    return;
  }
  pread_runs(f.fd.get(), f.offset, box_runs(box.dims, box.start, box.count), buffer, stored_bytes(spec_.dtype),
             "re-reading the done ranges recorded for '" + f.path + "'");
}

int FileOutput::writer_threads() const {
  if (files_.size() <= 1 || mpio_data_) return 1;
  const int parts = static_cast<int>(files_.size());
  return spec_.writers > 0 ? std::min(parts, spec_.writers)
                           : split_writers(parts, std::max(2u, std::thread::hardware_concurrency()));
}

// Round robin over the data files: the k-th pending slab of every file, then
// the (k+1)-th, so that slabs in flight together go to different files.
std::vector<int> FileOutput::write_order(const std::vector<int>& pending) const {
  if (files_.size() <= 1 || spec_.slab_units.empty()) return pending;
  std::vector<std::vector<int>> by_file(files_.size());
  for (int s : pending) by_file[file_of(spec_.slab_units[static_cast<std::size_t>(s)].begin)].push_back(s);
  std::vector<int> order;
  for (std::size_t k = 0; order.size() < pending.size(); ++k)
    for (const auto& slabs : by_file)
      if (k < slabs.size()) order.push_back(slabs[k]);
  return order;
}

}  // namespace discount
