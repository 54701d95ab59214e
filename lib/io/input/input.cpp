#include "io/input/input.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "common/crash_handler.hpp"
#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "io/hdf5/dimension_names.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/input_checks.hpp"
#include "io/input/input_dataset.hpp"
#include "io/input/input_files.hpp"
#include "io/input/synthetic.hpp"
#include "io/posix/box.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

FileBox discount_box(const InputShape& shape, const std::array<Axis, 3>& axes, Range dates, Range ids) {
  FileBox box{};
  for (int j = 0; j < 3; ++j) {
    switch (axes[j]) {
      case Axis::date:
        box.dims[j] = shape.dates;
        box.start[j] = dates.begin;
        box.count[j] = dates.size();
        break;
      case Axis::id:
        box.dims[j] = shape.ids;
        box.start[j] = ids.begin;
        box.count[j] = ids.size();
        break;
      case Axis::num:
        box.dims[j] = shape.nums;
        box.start[j] = 0;
        box.count[j] = shape.nums;
        break;
    }
  }
  return box;
}

namespace {

// How a dataset is read, as the run header and the report say it:
// "positional reads", "parallel chunk reads (shuffle + deflate 4, 16
// threads)", or "HDF5 reads (chunked, bitshuffle (filter id 32008); filter
// bitshuffle (32008) is not one this build decodes)".
std::string read_path(const DatasetInfo& info) {
  if (info.fast) return "positional reads";
  if (info.chunks) return info.chunks->describe();
  return "HDF5 reads (" + info.slow_why + (info.chunks_why.empty() ? "" : "; " + info.chunks_why) + ")";
}

std::string axes_string(const std::array<Axis, 3>& axes) {
  return std::string(axis_name(axes[0])) + "," + axis_name(axes[1]) + "," + axis_name(axes[2]);
}

class SyntheticInput final : public InputSource {
 public:
  explicit SyntheticInput(const SyntheticSource& s) : seed_(s.seed) { shape_ = {s.dates, s.ids, s.nums}; }
  void read_discount(Range dates, Range ids, double* buffer) override {
    // Synthetic sources are always laid out [date][id][num].
    const std::uint64_t key = synthetic::key(seed_, synthetic::discount);
    const std::int64_t rows = dates.size() * ids.size();
    const std::int64_t nums = shape_.nums, all_ids = shape_.ids;
    const std::int64_t id_count = ids.size();
    host_parallel(rows, io_threads(), [&](std::int64_t b, std::int64_t e, unsigned) {
      std::int64_t d = dates.begin + b / id_count, i = ids.begin + b % id_count;
      for (std::int64_t row = b; row < e; ++row) {
        const std::uint64_t n0 = static_cast<std::uint64_t>((d * all_ids + i) * nums);
        double* out = buffer + row * nums;
        for (std::int64_t k = 0; k < nums; ++k) out[k] = synthetic::value(key, n0 + k);
        if (++i == ids.end) {
          i = ids.begin;
          ++d;
        }
      }
    });
  }
  void read_multiplier(Range ids, double* buffer) override {
    const std::uint64_t key = synthetic::key(seed_, synthetic::multiplier);
    const std::int64_t n = ids.size() * shape_.nums;
    const std::uint64_t n0 = static_cast<std::uint64_t>(ids.begin * shape_.nums);
    host_parallel(n, io_threads(), [&](std::int64_t b, std::int64_t e, unsigned) {
      for (std::int64_t j = b; j < e; ++j) buffer[j] = synthetic::value(key, n0 + j);
    });
  }
  std::string describe() const override {
    return "synthetic (seed " + std::to_string(seed_) + ") [" + std::to_string(shape_.dates) + " x " +
           std::to_string(shape_.ids) + " x " + std::to_string(shape_.nums) + "]";
  }
  std::string identity() const override { return "synthetic:" + std::to_string(seed_) + ":" + describe(); }
  std::vector<DatasetFacts> datasets() const override {
    return {{"multiplier", "(synthetic)", "", {shape_.ids, shape_.nums}, {"id", "num"}, "float64", "computed"},
            {"discount",
             "(synthetic)",
             "",
             {shape_.dates, shape_.ids, shape_.nums},
             {"date", "id", "num"},
             "float64",
             "computed"}};
  }
  bool may_hold_nonfinite() const override { return false; }

 private:
  std::uint64_t seed_;
};

// HDF5 reads: at most this many chunks per H5Dread (HDF5 keeps about
// kChunkBookkeeping bytes for each chunk a read touches), HDF5's type
// conversion buffer and its chunk cache (their 1 MiB defaults; a cache sized
// to the chunks, up to 8 MiB, raised the peak RSS of e2e_peak_rss's chunked
// case by 18 MiB instead of lowering it): all counted in memory.host_budget.
constexpr std::uint64_t kReadChunks = 64;
constexpr std::uint64_t kChunkBookkeeping = 2048;
constexpr std::uint64_t kConversionBuffer = std::uint64_t{1} << 20;
constexpr std::uint64_t kMetadataCache = kInputMetadataCache;
constexpr std::uint64_t kChunkCache = std::uint64_t{1} << 20;

class Hdf5Input final : public InputSource {
 public:
  explicit Hdf5Input(const InputConfig& config) : config_(config) {
    h5::QuietErrors quiet;
    struct stat st {};
    if (::stat(config.file.c_str(), &st) != 0)
      throw missing_error("input.file '" + config.file + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw missing_error("input.file '" + config.file + "' is not a regular file");
    file_stat_ = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) +
                 "." + std::to_string(st.st_mtim.tv_nsec);
    content_ = "HDF5 file of " + std::to_string(st.st_size) + " bytes, sampled content " +
               sampled_content(config.file, static_cast<std::uint64_t>(st.st_size));
    file_ = open_input_file(config.file, "input.file '" + config.file + "'");

    {
      crash::InsideHdf5 inside("opening the datasets of file '" + config.file + "'");
      mult_ = open_input_dataset(file_.get(), config, config.multiplier, "input.multiplier", 2);
      disc_ = open_input_dataset(file_.get(), config, config.discount, "input.discount", 3);
    }
    {
      const InputAxes chosen =
          choose_input_axes(config, dimension_names(disc_.id.get()), dimension_names(mult_.id.get()), disc_.dims,
                            mult_.dims, "input.discount: dataset '" + config.discount + "' in '" + config.file + "'",
                            "input.multiplier: dataset '" + config.multiplier + "' in '" + config.file + "'");
      axes_ = chosen.axes;
      multiplier_axes_ = chosen.multiplier_axes;
      axes_from_ = chosen.axes_from;
    }
    for (int j = 0; j < 3; ++j) {
      const auto extent = static_cast<std::int64_t>(disc_.dims[j]);
      if (axes_[j] == Axis::date) shape_.dates = extent;
      if (axes_[j] == Axis::id) shape_.ids = extent;
      if (axes_[j] == Axis::num) shape_.nums = extent;
    }
    const int id_at = transposed() ? 1 : 0;
    const auto m_ids = static_cast<std::int64_t>(mult_.dims[id_at]),
               m_nums = static_cast<std::int64_t>(mult_.dims[1 - id_at]);
    if (m_ids != shape_.ids || m_nums != shape_.nums)
      throw data_error("shapes do not broadcast: " + config.multiplier + " " + h5::shape_string(mult_.dims) +
                       (transposed() ? " [num x id]" : " [id x num]") + " vs " + config.discount + " " +
                       h5::shape_string(disc_.dims) + " [" + axes_string(axes_) + "]: " +
                       (m_ids != shape_.ids ? "ids " + std::to_string(m_ids) + " != " + std::to_string(shape_.ids)
                                            : "nums " + std::to_string(m_nums) + " != " + std::to_string(shape_.nums)) +
                       axes_hint());
    if (shape_.dates == 0 || shape_.ids == 0 || shape_.nums == 0)
      throw data_error("empty dimension: " + config.discount + " " + h5::shape_string(disc_.dims) + " [" +
                       axes_string(axes_) + "] has nothing to compute");
  }

  void read_discount(Range dates, Range ids, double* buffer) override {
    const FileBox box = discount_box(shape_, axes_, dates, ids);
    read_box(disc_, config_.discount, box.start, box.count, buffer);
  }
  // Chunks decoded here are visited as each lands (when they land whole).
  bool visits_as_read() const override { return disc_.fast || disc_.chunks; }
  void read_discount_visited(Range dates, Range ids, double* buffer, const PieceVisitor& visit) override {
    if (disc_.chunks) {
      const FileBox box = discount_box(shape_, axes_, dates, ids);
      if (!disc_.chunks->read(box.start, box.count, buffer, "reading '" + config_.discount + "' from " + config_.file,
                              visit))
        visit_in_pieces(dates.size() * ids.size() * shape_.nums, visit);
      return;
    }
    if (!disc_.fast) {
      InputSource::read_discount_visited(dates, ids, buffer, visit);
      return;
    }
    const FileBox box = discount_box(shape_, axes_, dates, ids);
    pread_runs(
        disc_.fd.get(), disc_.offset, box_runs(box.dims, box.start, box.count), buffer, sizeof(double),
        "reading '" + config_.discount + "' from " + config_.file, [&visit](std::uint64_t offset, std::uint64_t bytes) {
          visit(static_cast<std::int64_t>(offset / sizeof(double)), static_cast<std::int64_t>(bytes / sizeof(double)));
        });
  }
  // Chunks decoded here serve ranges where the pieces meet each chunk in
  // one stretch (one date thick in the file's first axis): a thread decodes
  // it once, keeping it while its pieces walk through it.
  bool reads_ranges() const override { return disc_.fast || (disc_.chunks && disc_.chunks->walks_chunks_once()); }
  void read_discount_range(Range dates, Range ids, std::int64_t first, std::int64_t count, double* buffer) override {
    const FileBox box = discount_box(shape_, axes_, dates, ids);
    if (disc_.chunks) {
      disc_.chunks->read_range(box.start, box.count, first, count, buffer,
                               "reading '" + config_.discount + "' from " + config_.file);
      return;
    }
    pread_runs_here(disc_.fd.get(), disc_.offset, box_range_runs(box.dims, box.start, box.count, first, first + count),
                    buffer, sizeof(double), "reading '" + config_.discount + "' from " + config_.file);
  }
  void read_multiplier(Range ids, double* buffer) override {
    if (!transposed()) {
      read_box(mult_, config_.multiplier, {ids.begin, 0, 0}, {ids.size(), shape_.nums, 1}, buffer);
      return;
    }
    // Stored [num][id]: the [nums x ids] block, then laid out as [ids x nums]
    // rows (docs/your-data.md: one pass over multBy, 1/dates of the data).
    std::vector<double> block(static_cast<std::size_t>(ids.size() * shape_.nums));
    read_box(mult_, config_.multiplier, {0, ids.begin, 0}, {shape_.nums, ids.size(), 1}, block.data());
    const std::int64_t n_ids = ids.size(), nums = shape_.nums;
    host_parallel(n_ids, io_threads(), [&](std::int64_t b, std::int64_t e, unsigned) {
      for (std::int64_t i = b; i < e; ++i)
        for (std::int64_t k = 0; k < nums; ++k) buffer[i * nums + k] = block[static_cast<std::size_t>(k * n_ids + i)];
    });
  }
  std::string describe() const override {
    return config_.file + " (" + config_.multiplier + " " + h5::shape_string(mult_.dims) + " " + mult_.type_text +
           (transposed() ? " [num,id]" : "") + ", " + config_.discount + " " + h5::shape_string(disc_.dims) + " " +
           disc_.type_text + " [" + axes_string(axes_) + "]" +
           (axes_from_ == "dimension names" ? " from its dimension names" : "") + ", " + read_path_text() + ")" +
           (read_advice().empty() ? std::string() : "; warning: " + read_advice());
  }
  // ", positional reads" when both datasets take the fast path in input.file
  // itself; otherwise which path each one takes, and why.
  std::string read_path_text() const {
    auto one = [](const DatasetInfo& info) {
      if (!info.fast) return read_path(info);
      return std::string("positional reads") + (info.holder.empty() ? "" : " from '" + info.holder + "'");
    };
    if (mult_.fast && disc_.fast && mult_.holder.empty() && disc_.holder.empty()) return "positional reads";
    if (!mult_.fast && !disc_.fast && read_path(mult_) == read_path(disc_)) return one(disc_);
    return config_.multiplier + ": " + one(mult_) + "; " + config_.discount + ": " + one(disc_);
  }
  std::string identity() const override {
    return content_ + "; " + config_.multiplier + " " + h5::shape_string(mult_.dims) + " " + mult_.type_text + ", " +
           config_.discount + " " + h5::shape_string(disc_.dims) + " " + disc_.type_text + " [" + axes_string(axes_) +
           "]" + (transposed() ? ", multBy [num,id]" : "");
  }
  std::string file_stat() const override { return file_stat_; }
  std::vector<DatasetFacts> datasets() const override {
    auto facts = [&](const char* role, const std::string& name, const DatasetInfo& info,
                     std::vector<std::string> axes) {
      DatasetFacts f{
          role,           name,           info.holder.empty() ? config_.file : info.holder, {}, std::move(axes),
          info.type_text, read_path(info)};
      for (hsize_t d : info.dims) f.shape.push_back(static_cast<std::int64_t>(d));
      return f;
    };
    return {
        facts("multiplier", config_.multiplier, mult_,
              {axis_name(multiplier_axes_[0]), axis_name(multiplier_axes_[1])}),
        facts("discount", config_.discount, disc_, {axis_name(axes_[0]), axis_name(axes_[1]), axis_name(axes_[2])})};
  }
  std::string hdf5_file() const override { return config_.file; }
  DecodeStats decode_stats() const override {
    DecodeStats stats;
    for (const DatasetInfo* info : {&disc_, &mult_})
      if (info->chunks) stats += info->chunks->stats();
    return stats;
  }
  DecodeSample sample_decoding() override {
    if (!disc_.chunks) return {};
    return disc_.chunks->sample_rate("reading '" + config_.discount + "' from " + config_.file);
  }
  ChunkGrid chunk_grid() const override {
    if (!disc_.chunks) return {};
    ChunkGrid grid;
    for (int j = 0; j < 3; ++j) {
      const auto extent = static_cast<std::int64_t>(disc_.storage.chunk[j]);
      if (axes_[j] == Axis::date) grid.dates = extent;
      if (axes_[j] == Axis::id) grid.ids = extent;
    }
    grid.bytes = static_cast<std::uint64_t>(disc_.storage.chunk[0] * disc_.storage.chunk[1] * disc_.storage.chunk[2]) *
                 sizeof(double);
    grid.threads = ChunkReader::threads();
    return grid;
  }

 private:
  // "; input.axes: [id, date, num] would fit" for each other axis order
  // under which the multiplier's [id x num] matches the discount dataset.
  std::string axes_hint() const {
    return fitting_axes_hint(disc_.dims, mult_.dims, axes_, multiplier_axes_, config_.multiplier);
  }

  void read_box(const DatasetInfo& info, const std::string& name, const std::array<std::int64_t, 3>& start,
                const std::array<std::int64_t, 3>& count, double* buffer) {
    const int rank = static_cast<int>(info.dims.size());
    if (info.chunks) {
      info.chunks->read(start, count, buffer, "reading '" + name + "' from " + config_.file);
      return;
    }
    if (info.fast) {
      std::array<std::int64_t, 3> dims{1, 1, 1};
      for (int j = 0; j < rank; ++j) dims[j] = static_cast<std::int64_t>(info.dims[j]);
      pread_runs(info.fd.get(), info.offset, box_runs(dims, start, count), buffer, sizeof(double),
                 "reading '" + name + "' from " + config_.file);
      return;
    }
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    h5::QuietErrors quiet;
    crash::InsideHdf5 inside("reading dataset '" + name + "' of file '" + config_.file + "'");
    std::vector<hsize_t> h_start(rank), h_count(rank);
    for (int j = 0; j < rank; ++j) {
      h_start[j] = static_cast<hsize_t>(start[j]);
      h_count[j] = static_cast<hsize_t>(count[j]);
    }
    // Pieces of at most kReadChunks chunks: HDF5's per-chunk bookkeeping
    // stays within what read_memory_bytes() counts. Each piece lands at its
    // place in the packed buffer through a memory hyperslab.
    h5::Id file_space = h5::dataspace(H5Dget_space(info.id.get()));
    h5::Id mem_space = h5::dataspace(H5Screate_simple(rank, h_count.data(), nullptr));
    for (const SubBox& piece : chunk_bounded_boxes(h_start, h_count, info.storage.chunk, kReadChunks)) {
      std::vector<hsize_t> mem_start(rank);
      for (int j = 0; j < rank; ++j) mem_start[j] = piece.start[j] - h_start[j];
      if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, piece.start.data(), nullptr, piece.count.data(),
                              nullptr) < 0 ||
          H5Sselect_hyperslab(mem_space.get(), H5S_SELECT_SET, mem_start.data(), nullptr, piece.count.data(), nullptr) <
              0 ||
          H5Dread(info.id.get(), H5T_NATIVE_DOUBLE, mem_space.get(), file_space.get(), H5P_DEFAULT, buffer) < 0) {
        const std::string messages = h5::error_messages();
        const std::string cause = messages.substr(0, messages.find("; "));
        if (h5::read_failure_is_damage(messages))
          throw data_error("reading '" + name + "' from " + config_.file + ": the stored data is damaged (" + cause +
                           "); running again cannot help: check the file with h5dump");
        throw io_error("reading '" + name + "' from " + config_.file + " failed (HDF5 read error" +
                       (messages.empty() ? std::string() : ": " + cause) + ")");
      }
    }
  }

  StoredBytes stored_bytes() const override { return {disc_.element_size, mult_.element_size}; }
  std::uint64_t read_memory_bytes() const override {
    std::uint64_t bytes = mult_.fast && disc_.fast ? 0 : kMetadataCache;
    for (const DatasetInfo* info : {&mult_, &disc_}) {
      if (info->fast) continue;
      if (info->chunks) {
        bytes += info->chunks->memory_bytes();
        continue;
      }
      bytes += kConversionBuffer + kReadChunks * kChunkBookkeeping;
      if (info->storage.layout == H5D_CHUNKED) bytes += kChunkCache + info->storage.chunk_bytes;
    }
    return bytes;
  }
  std::string read_advice() const override {
    std::string text;
    for (const auto& [info, name] : {std::pair{&mult_, &config_.multiplier}, std::pair{&disc_, &config_.discount}}) {
      const std::string line = chunk_advice(info->storage, *name, info->dims, info->element_size, config_.file);
      if (!line.empty()) text += (text.empty() ? "" : "; ") + line;
    }
    return text;
  }

  bool transposed() const { return multiplier_axes_[0] == Axis::num; }

  InputConfig config_;
  std::string axes_from_;
  h5::Id file_;
  DatasetInfo mult_, disc_;
  std::string file_stat_, content_;
};

}  // namespace

std::unique_ptr<InputSource> open_synthetic_input(const SyntheticSource& source) {
  return std::make_unique<SyntheticInput>(source);
}

std::unique_ptr<InputSource> open_hdf5_input(const InputConfig& config) { return std::make_unique<Hdf5Input>(config); }

}  // namespace discount
