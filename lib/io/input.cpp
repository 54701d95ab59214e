#include "io/input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "io/box.hpp"
#include "io/hdf5_handle.hpp"
#include "io/posix_io.hpp"
#include "io/synthetic.hpp"

namespace discount {

FileBox discount_box(const InputShape& shape, const std::array<Axis, 3>& axes, Range dates, Range ids) {
  FileBox box{};
  for (int j = 0; j < 3; ++j) {
    switch (axes[j]) {
      case Axis::date: box.dims[j] = shape.dates; box.start[j] = dates.begin; box.count[j] = dates.size(); break;
      case Axis::id: box.dims[j] = shape.ids; box.start[j] = ids.begin; box.count[j] = ids.size(); break;
      case Axis::num: box.dims[j] = shape.nums; box.start[j] = 0; box.count[j] = shape.nums; break;
    }
  }
  return box;
}

namespace {

std::string axes_string(const std::array<Axis, 3>& axes) {
  return std::string(axis_name(axes[0])) + "," + axis_name(axes[1]) + "," + axis_name(axes[2]);
}

class SyntheticInput final : public InputSource {
 public:
  explicit SyntheticInput(const SyntheticSource& s) : seed_(s.seed) {
    shape_ = {s.dates, s.ids, s.nums};
  }
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
  bool may_hold_nonfinite() const override { return false; }

 private:
  std::uint64_t seed_;
};

struct DatasetInfo {
  h5::Id id;
  std::vector<hsize_t> dims;
  bool fast = false;  // contiguous, unfiltered, native little-endian float64
  haddr_t offset = HADDR_UNDEF;
  std::string type_text;
};

class Hdf5Input final : public InputSource {
 public:
  explicit Hdf5Input(const InputConfig& config) : config_(config) {
    h5::QuietErrors quiet;
    struct stat st {};
    if (::stat(config.file.c_str(), &st) != 0)
      throw missing_error("input.file '" + config.file + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw missing_error("input.file '" + config.file + "' is not a regular file");
    file_stat_ = std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
                 std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino);
    if (H5Fis_hdf5(config.file.c_str()) <= 0)
      throw missing_error("input.file '" + config.file + "' is not an HDF5 file");
    file_ = h5::file(H5Fopen(config.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (!file_) throw missing_error("input.file '" + config.file + "' cannot be opened as HDF5");

    mult_ = open_dataset(config.multiplier, "input.multiplier", 2);
    disc_ = open_dataset(config.discount, "input.discount", 3);
    axes_ = config.axes;
    for (int j = 0; j < 3; ++j) {
      const auto extent = static_cast<std::int64_t>(disc_.dims[j]);
      if (axes_[j] == Axis::date) shape_.dates = extent;
      if (axes_[j] == Axis::id) shape_.ids = extent;
      if (axes_[j] == Axis::num) shape_.nums = extent;
    }
    const auto m_ids = static_cast<std::int64_t>(mult_.dims[0]), m_nums = static_cast<std::int64_t>(mult_.dims[1]);
    if (m_ids != shape_.ids || m_nums != shape_.nums)
      throw data_error("shapes do not broadcast: " + config.multiplier + " " + h5::shape_string(mult_.dims) +
                       " [id x num] vs " + config.discount + " " + h5::shape_string(disc_.dims) + " [" +
                       axes_string(axes_) + "]: " + (m_ids != shape_.ids ? "ids " + std::to_string(m_ids) + " != " +
                                                                               std::to_string(shape_.ids)
                                                                         : "nums " + std::to_string(m_nums) +
                                                                               " != " + std::to_string(shape_.nums)));
    if (shape_.dates == 0 || shape_.ids == 0 || shape_.nums == 0)
      throw data_error("empty dimension: " + config.discount + " " + h5::shape_string(disc_.dims) + " [" +
                       axes_string(axes_) + "] has nothing to compute");
    if (mult_.fast || disc_.fast) {
      fd_ = ::open(config.file.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) mult_.fast = disc_.fast = false;
      // Slabs are read front to back: a larger read-ahead window.
      else ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
  }
  ~Hdf5Input() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void read_discount(Range dates, Range ids, double* buffer) override {
    const FileBox box = discount_box(shape_, axes_, dates, ids);
    read_box(disc_, config_.discount, box.start, box.count, buffer);
  }
  void read_multiplier(Range ids, double* buffer) override {
    read_box(mult_, config_.multiplier, {ids.begin, 0, 0}, {ids.size(), shape_.nums, 1}, buffer);
  }
  std::string describe() const override {
    return config_.file + " (" + config_.multiplier + " " + h5::shape_string(mult_.dims) + " " + mult_.type_text +
           ", " + config_.discount + " " + h5::shape_string(disc_.dims) + " " + disc_.type_text + " [" +
           axes_string(axes_) + "]" + (disc_.fast ? ", positional reads" : ", HDF5 reads") + ")";
  }
  std::string identity() const override { return "hdf5:" + config_.file + ":" + file_stat_ + ":" + describe(); }

 private:
  DatasetInfo open_dataset(const std::string& name, const std::string& key, int rank) {
    DatasetInfo info;
    if (H5Lexists(file_.get(), name.c_str(), H5P_DEFAULT) <= 0)
      throw missing_error(key + ": dataset '" + name + "' not found in '" + config_.file + "'");
    info.id = h5::dataset(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT));
    if (!info.id) throw missing_error(key + ": '" + name + "' in '" + config_.file + "' is not a dataset");
    info.dims = h5::dataset_dims(info.id.get());
    if (static_cast<int>(info.dims.size()) != rank)
      throw data_error(key + ": dataset '" + name + "' has rank " + std::to_string(info.dims.size()) + " " +
                       h5::shape_string(info.dims) + ", expected rank " + std::to_string(rank));
    h5::Id type = h5::datatype(H5Dget_type(info.id.get()));
    const H5T_class_t cls = H5Tget_class(type.get());
    const std::size_t size = H5Tget_size(type.get());
    if (cls == H5T_FLOAT && size <= 8) {
      info.type_text = "float" + std::to_string(size * 8);
      if (H5Tget_order(type.get()) == H5T_ORDER_BE) info.type_text += " big-endian";
    } else if (cls == H5T_INTEGER && size <= 4) {
      info.type_text = (H5Tget_sign(type.get()) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(size * 8);
    } else {
      std::string what = cls == H5T_INTEGER ? std::to_string(size * 8) + "-bit integer (not exactly representable "
                                                                          "as float64)"
                         : cls == H5T_STRING ? "string"
                         : cls == H5T_FLOAT  ? std::to_string(size * 8) + "-bit float"
                                             : "non-numeric";
      throw data_error(key + ": dataset '" + name + "' has unsupported type " + what +
                       "; supported: float16/32/64 (either byte order) and integers up to 32 bits");
    }
    h5::Id dcpl = h5::plist(H5Dget_create_plist(info.id.get()));
    const bool contiguous = H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS;
    const bool unfiltered = H5Pget_nfilters(dcpl.get()) == 0;
    info.offset = H5Dget_offset(info.id.get());
    info.fast = contiguous && unfiltered && H5Tequal(type.get(), H5T_NATIVE_DOUBLE) > 0 && info.offset != HADDR_UNDEF;
    return info;
  }

  void read_box(const DatasetInfo& info, const std::string& name, const std::array<std::int64_t, 3>& start,
                const std::array<std::int64_t, 3>& count, double* buffer) {
    const int rank = static_cast<int>(info.dims.size());
    if (info.fast) {
      std::array<std::int64_t, 3> dims{1, 1, 1};
      for (int j = 0; j < rank; ++j) dims[j] = static_cast<std::int64_t>(info.dims[j]);
      pread_runs(fd_, info.offset, box_runs(dims, start, count), buffer, sizeof(double),
                 "reading '" + name + "' from " + config_.file);
      return;
    }
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    h5::QuietErrors quiet;
    std::array<hsize_t, 3> h_start{}, h_count{};
    for (int j = 0; j < rank; ++j) {
      h_start[j] = static_cast<hsize_t>(start[j]);
      h_count[j] = static_cast<hsize_t>(count[j]);
    }
    h5::Id file_space = h5::dataspace(H5Dget_space(info.id.get()));
    h5::Id mem_space = h5::dataspace(H5Screate_simple(rank, h_count.data(), nullptr));
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, h_start.data(), nullptr, h_count.data(), nullptr) < 0 ||
        H5Dread(info.id.get(), H5T_NATIVE_DOUBLE, mem_space.get(), file_space.get(), H5P_DEFAULT, buffer) < 0)
      throw io_error("reading '" + name + "' from " + config_.file + " failed (HDF5 read error)");
  }

  InputConfig config_;
  h5::Id file_;
  DatasetInfo mult_, disc_;
  int fd_ = -1;
  std::string file_stat_;
};

}  // namespace

std::unique_ptr<InputSource> open_input(const InputConfig& config) {
  if (config.synthetic) return std::make_unique<SyntheticInput>(*config.synthetic);
  return std::make_unique<Hdf5Input>(config);
}

}  // namespace discount
