#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <vector>
#include <algorithm>

#include "common/error.hpp"
#include "common/paths.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/vds_names.hpp"
#include "io/input/input.hpp"
#include "io/lists/open_input.hpp"
#include "io/records/output_record.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/posix/posix_io.hpp"
#include "io/input/synthetic.hpp"
#include "commands/commands.hpp"
#include "commands/tools.hpp"
#include "resolve/resolve.hpp"

namespace discount {

namespace {

// A split output's parts are looked for beside the master only: HDF5 would
// also try the working directory, where another output's parts may lie.
void check_parts_beside(hid_t dcpl, const std::string& path) {
  std::size_t count = 0;
  if (H5Pget_virtual_count(dcpl, &count) < 0) throw data_error("verify: cannot read the part map of '" + path + "'");
  for (std::size_t i = 0; i < count; ++i) {
    const ssize_t length = H5Pget_virtual_filename(dcpl, i, nullptr, 0);
    std::vector<char> text(static_cast<std::size_t>(std::max<ssize_t>(length, 0)) + 1, '\0');
    if (length < 0 || H5Pget_virtual_filename(dcpl, i, text.data(), text.size()) < 0)
      throw data_error("verify: cannot read the part map of '" + path + "'");
    const std::string part = vds_unescape(text.data());
    const std::string where = part.empty() || part[0] == '/' ? part : dir_of(path) + "/" + part;
    struct stat st {};
    if (part != "." && ::stat(where.c_str(), &st) != 0)
      throw data_error("verify: the part '" + where + "' of '" + path + "' is missing (parts are looked for beside " +
                       "the output only)");
  }
}

h5::Id open_file(const std::string& path, const char* what) {
  h5::QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw missing_error(std::string(what) + " '" + path + "' is not a readable HDF5 file");
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file) throw missing_error(std::string(what) + " '" + path + "' cannot be opened");
  return file;
}

// `rank` and `elements` (0: unknown) describe the dataset expected, so that
// a missing one's message lists the file's datasets that could be meant.
h5::Id open_dataset(const h5::Id& file, const std::string& name, const std::string& path, const std::string& key,
                    int rank, std::uint64_t elements) {
  h5::QuietErrors quiet;
  if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0)
    throw missing_error(key + ": dataset '" + name + "' not found in '" + path + "'" +
                        h5::dataset_candidates(file.get(), rank, elements));
  h5::Id dataset = h5::dataset(H5Dopen2(file.get(), name.c_str(), h5::input_dataset_access().get()));
  if (!dataset) throw missing_error("'" + name + "' in '" + path + "' cannot be opened as a dataset");
  return dataset;
}

void read_box(const h5::Id& dataset, int rank, const std::array<std::int64_t, 3>& start,
              const std::array<std::int64_t, 3>& count, std::vector<double>& out) {
  std::array<hsize_t, 3> s{}, c{};
  std::size_t n = 1;
  for (int j = 0; j < rank; ++j) {
    s[j] = static_cast<hsize_t>(start[j]);
    c[j] = static_cast<hsize_t>(count[j]);
    n *= c[j];
  }
  out.resize(n);
  h5::Id file_space = h5::dataspace(H5Dget_space(dataset.get()));
  h5::Id mem_space = h5::dataspace(H5Screate_simple(rank, c.data(), nullptr));
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, s.data(), nullptr, c.data(), nullptr) < 0 ||
      H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()) < 0) {
    const std::string messages = h5::error_messages();
    throw data_error("verify: HDF5 cannot read a box (" + messages.substr(0, messages.find("; ")) +
                     "): the file is damaged");
  }
}

// A double with 17 significant digits: enough to tell any two doubles apart.
std::string exact(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// How many doubles lie between a and b: their bit patterns mapped to integers
// whose order is the order of the values (negatives reversed below zero).
std::string ulps_apart(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return "NaN involved";
  auto ordered = [](double x) {
    std::int64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits < 0 ? std::numeric_limits<std::int64_t>::min() - bits : bits;
  };
  const std::int64_t ia = ordered(a), ib = ordered(b);
  // Unsigned difference: two far-apart values may not fit in int64.
  const std::uint64_t d = ia > ib ? std::uint64_t(ia) - std::uint64_t(ib) : std::uint64_t(ib) - std::uint64_t(ia);
  return std::to_string(d) + (d == 1 ? " ulp" : " ulps");
}

// The output's done ranges against the checksums recorded when they were
// written (io/records/output_record.hpp): the number checked (0: the file records
// none, an output of an older version). Throws data_error naming a range
// whose bytes differ.
OutputSpec output_as_verified(const Config& config, const std::array<Axis, 3>& axes, const InputShape& shape) {
  OutputSpec spec;
  spec.path = config.output.file;
  spec.dataset = config.output.dataset;
  spec.dtype = config.output.dtype;
  spec.axes = axes;
  spec.dates = shape.dates;
  spec.ids = shape.ids;
  spec.nums = shape.nums;
  return spec;
}

std::size_t check_recorded_sums(const Config& config, const std::array<Axis, 3>& axes, const InputShape& shape) {
  const std::string& path = config.output.file;
  OutputSpec spec = output_as_verified(config, axes, shape);
  RecordLayout layout;
  h5::QuietErrors quiet;
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file || H5Lexists(file.get(), kRangesDataset, H5P_DEFAULT) <= 0) return 0;
  {
    h5::Id group = h5::group(H5Gopen2(file.get(), "discount_app", H5P_DEFAULT));
    spec.chunk_axis = h5::read_string_attribute(group.get(), "chunk_axis") == "id" ? Axis::id : Axis::date;
    // A split output's cv is a virtual dataset over its parts (io/records/output_parts.hpp).
    h5::Id data = h5::dataset(H5Dopen2(file.get(), spec.dataset.c_str(), H5P_DEFAULT));
    h5::Id dcpl = data ? h5::plist(H5Dget_create_plist(data.get())) : h5::Id{};
    if (dcpl && H5Pget_layout(dcpl.get()) == H5D_VIRTUAL) {
      spec.layout = OutputLayout::split;
      check_parts_beside(dcpl.get(), path);
    }
    struct stat st {};
    ::stat(path.c_str(), &st);
    const std::string damage = record_damage(file.get(), spec, static_cast<std::uint64_t>(st.st_size), layout);
    if (!damage.empty()) throw data_error("verify: the record of '" + path + "' is damaged: " + damage);
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw io_error("verify: cannot open '" + path + "': " + std::strerror(errno));
  const RangeTable table = read_table(fd.get(), layout, path);
  // The values through HDF5, as any reader sees them (a split output's parts
  // found beside the master, where it names them).
  h5::Id dapl = h5::input_dataset_access();
  h5::Id data = h5::dataset(H5Dopen2(file.get(), spec.dataset.c_str(), dapl.get()));
  if (!data) throw data_error("verify: cannot open dataset '" + spec.dataset + "' of '" + path + "'");
  const bool by_date = spec.chunk_axis == Axis::date;
  const auto read = [&](Range units, double* buffer) {
    const FileBox box = discount_box({spec.dates, spec.ids, spec.nums}, spec.axes,
                                     by_date ? units : Range{0, spec.dates}, by_date ? Range{0, spec.ids} : units);
    hsize_t start[3], count[3];
    for (int j = 0; j < 3; ++j) {
      start[j] = static_cast<hsize_t>(box.start[j]);
      count[j] = static_cast<hsize_t>(box.count[j]);
    }
    h5::Id file_space = h5::dataspace(H5Dget_space(data.get()));
    h5::Id mem_space = h5::dataspace(H5Screate_simple(3, count, nullptr));
    // As stored: float32 values packed in the buffer's first half (failed_output_sums).
    const hid_t native = spec.dtype == OutputType::float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(data.get(), native, mem_space.get(), file_space.get(), H5P_DEFAULT, buffer) < 0)
      throw data_error("verify: cannot read dataset '" + spec.dataset + "' of '" + path +
                       "' (a split output's part missing?): " + h5::error_messages());
  };
  const auto failed = failed_output_sums(spec, table, std::uint64_t{32} << 20, {}, read);
  if (!failed.empty()) {
    const DoneRange& r = *table.slots()[failed.front()];
    throw data_error("verify: " + std::to_string(failed.size()) + " done range(s) of '" + path +
                     "' differ from the checksum recorded when they were written; first " + axis_name(spec.chunk_axis) +
                     "s [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")");
  }
  return table.valid();
}

}  // namespace

namespace {

// The input as verify reads it: the same checks as `run` (files, datasets,
// ranks, dtypes, shapes, sub-ranges), so a wrong input fails here as it does
// there; the values are then read with plain HDF5 calls, independently of
// the pipeline.
struct VerifyInput {
  std::unique_ptr<InputSource> source;  // kept open: an input.file list is read through its virtual dataset
  h5::Id file, mult, disc;              // none for a synthetic input
  InputShape shape;
  Range dates, ids;
  std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};  // input.axes, or the file's dimension names
  bool mult_transposed = false;                               // multBy stored [num][id]
  bool synthetic = false;
};

VerifyInput open_verify_input(const Config& config) {
  VerifyInput in;
  in.synthetic = config.input.synthetic.has_value();
  in.source = open_input(config.input);
  in.shape = in.source->shape();
  in.axes = in.source->axes();
  in.mult_transposed = in.source->multiplier_axes()[0] == Axis::num;
  in.dates = select_range(config.input.dates, in.shape.dates, "input.dates", "dates");
  in.ids = select_range(config.input.ids, in.shape.ids, "input.ids", "ids");
  if (!in.synthetic) {
    const std::string path = in.source->hdf5_file();
    in.file = open_file(path, "input.file");
    in.mult = open_dataset(in.file, config.input.multiplier, path, "input.multiplier", 2, 0);
    in.disc = open_dataset(in.file, config.input.discount, path, "input.discount", 3, 0);
  }
  return in;
}

// The output's shape in the input's axis order and its stored type.
void check_output_dataset(const Config& config, hid_t cv, const InputShape& out_shape, const VerifyInput& in) {
  const auto dims = h5::dataset_dims(cv);
  const FileBox whole = discount_box(out_shape, in.axes, {0, in.dates.size()}, {0, in.ids.size()});
  bool same = dims.size() == 3;
  for (int j = 0; same && j < 3; ++j) same = static_cast<std::int64_t>(dims[j]) == whole.dims[j];
  if (!same)
    throw data_error("verify: output '" + config.output.dataset + "' has shape " + h5::shape_string(dims) +
                     ", expected " +
                     h5::shape_string({hsize_t(whole.dims[0]), hsize_t(whole.dims[1]), hsize_t(whole.dims[2])}));
  h5::Id type = h5::datatype(H5Dget_type(cv));
  const OutputType want = config.output.dtype;
  if (!type || H5Tget_class(type.get()) != H5T_FLOAT || H5Tget_size(type.get()) != stored_bytes(want))
    throw data_error("verify: output '" + config.output.dataset + "' in '" + config.output.file +
                     "' is not stored as " + stored_type_name(want) + " (output.dtype); set output.dtype to " +
                     "the type it was written with");
}

// Boxes of one date x a block of ids (date, first id; relative to the
// selection): every one, or a random sample and the far corner.
std::vector<std::pair<std::int64_t, std::int64_t>> verify_boxes(const VerifyOptions& options, Range dates, Range ids,
                                                                std::int64_t id_block) {
  std::vector<std::pair<std::int64_t, std::int64_t>> boxes;
  if (options.full) {
    for (std::int64_t d = 0; d < dates.size(); ++d)
      for (std::int64_t i = 0; i < ids.size(); i += id_block) boxes.emplace_back(d, i);
    return boxes;
  }
  std::mt19937_64 rng(options.seed);
  const std::int64_t sample_block = std::min<std::int64_t>(ids.size(), 4096);
  for (int s = 0; s < 16; ++s) {
    const std::int64_t d = static_cast<std::int64_t>(rng() % dates.size());
    const std::int64_t i = static_cast<std::int64_t>(rng() % (ids.size() - sample_block + 1));
    boxes.emplace_back(d, i);
  }
  boxes.emplace_back(dates.size() - 1, ids.size() - sample_block);  // the far corner
  return boxes;
}

struct Tally {
  std::uint64_t checked = 0, wrong = 0;
  std::string first_wrong;
};

// One box of the output against multBy * discount recomputed from the input
// (or the synthetic formula), bit for bit; float32 output: the float64
// product rounded once.
class BoxChecker {
 public:
  BoxChecker(const Config& config, const VerifyInput& in, const h5::Id& cv, const InputShape& out_shape)
      : in_(in), cv_(cv), out_shape_(out_shape), float32_(config.output.dtype == OutputType::float32) {
    const std::uint64_t seed = in.synthetic ? config.input.synthetic->seed : 0;
    mult_key_ = synthetic::key(seed, synthetic::multiplier);
    disc_key_ = synthetic::key(seed, synthetic::discount);
  }

  void check(std::int64_t d, std::int64_t i0, std::int64_t block, Tally& tally) {
    const std::int64_t date = in_.dates.begin + d, id0 = in_.ids.begin + i0, nums = in_.shape.nums;
    const FileBox in_box = discount_box(in_.shape, in_.axes, {date, date + 1}, {id0, id0 + block});
    const FileBox out_box = discount_box(out_shape_, in_.axes, {d, d + 1}, {i0, i0 + block});
    read_box(cv_, 3, out_box.start, out_box.count, cv_values_);
    if (!in_.synthetic) {
      if (in_.mult_transposed)
        read_box(in_.mult, 2, {0, id0, 0}, {nums, block, 1}, mult_);
      else
        read_box(in_.mult, 2, {id0, 0, 0}, {block, nums, 1}, mult_);
      read_box(in_.disc, 3, in_box.start, in_box.count, disc_);
    }
    // Walk the box in file order; map each element to (id, num).
    std::int64_t n = 0;
    const auto& c = in_box.count;
    for (std::int64_t a = 0; a < c[0]; ++a)
      for (std::int64_t b = 0; b < c[1]; ++b)
        for (std::int64_t e = 0; e < c[2]; ++e, ++n) {
          const std::int64_t coord[3] = {a, b, e};
          std::int64_t i = 0, k = 0;
          for (int j = 0; j < 3; ++j) {
            if (in_.axes[j] == Axis::id) i = coord[j];
            if (in_.axes[j] == Axis::num) k = coord[j];
          }
          const double expected = expected_value(date, id0, i, k, block, n);
          const double got = cv_values_[static_cast<std::size_t>(n)];
          ++tally.checked;
          if (std::memcmp(&expected, &got, sizeof(double)) != 0 && tally.wrong++ == 0)
            tally.first_wrong = "[date " + std::to_string(date) + ", id " + std::to_string(id0 + i) + ", num " +
                                std::to_string(k) + "]: cv=" + exact(got) + ", expected " + exact(expected) + " (" +
                                ulps_apart(got, expected) + ")";
        }
  }

 private:
  double expected_value(std::int64_t date, std::int64_t id0, std::int64_t i, std::int64_t k, std::int64_t block,
                        std::int64_t n) const {
    const std::int64_t nums = in_.shape.nums;
    double m, x;
    if (in_.synthetic) {
      m = synthetic::value(mult_key_, static_cast<std::uint64_t>((id0 + i) * nums + k));
      x = synthetic::value(disc_key_, static_cast<std::uint64_t>((date * in_.shape.ids + id0 + i) * nums + k));
    } else {
      m = mult_[static_cast<std::size_t>(in_.mult_transposed ? k * block + i : i * nums + k)];
      x = disc_[static_cast<std::size_t>(n)];
    }
    const double product = m * x;
    return float32_ ? static_cast<double>(static_cast<float>(product)) : product;
  }

  const VerifyInput& in_;
  const h5::Id& cv_;
  InputShape out_shape_;
  bool float32_;
  std::uint64_t mult_key_ = 0, disc_key_ = 0;
  std::vector<double> mult_, disc_, cv_values_;
};

}  // namespace

int verify_command(const Config& config, const VerifyOptions& options) {
  if (config.output.mode != OutputMode::file) throw config_error("verify needs output.mode: file");
  h5::QuietErrors quiet;  // a damaged file gives our one line, not HDF5's error stack
  const VerifyInput in = open_verify_input(config);
  h5::Id out_file = open_file(config.output.file, "output.file");
  const InputShape out_shape{in.dates.size(), in.ids.size(), in.shape.nums};
  h5::Id cv_ds = open_dataset(out_file, config.output.dataset, config.output.file, "output.dataset", 3,
                              static_cast<std::uint64_t>(out_shape.dates * out_shape.ids * out_shape.nums));
  check_output_dataset(config, cv_ds.get(), out_shape, in);
  const std::int64_t id_block = std::min<std::int64_t>(in.ids.size(), 1 << 18);
  BoxChecker checker(config, in, cv_ds, out_shape);
  Tally tally;
  for (auto [d, i0] : verify_boxes(options, in.dates, in.ids, id_block))
    checker.check(d, i0, std::min(id_block, in.ids.size() - i0), tally);
  if (tally.wrong)
    throw data_error("verify: " + std::to_string(tally.wrong) + " of " + std::to_string(tally.checked) +
                     " elements differ in '" + config.output.file + "'; first at " + tally.first_wrong);
  // A full check also reads every done range against its recorded checksum
  // (the output opened anew: HDF5 refuses a second open of cv with other access properties).
  cv_ds.reset();
  out_file.reset();
  const std::size_t ranges = options.full ? check_recorded_sums(config, in.axes, out_shape) : 0;
  std::cout << "verify: " << tally.checked << " elements checked (" << (options.full ? "full" : "sample")
            << "), all equal to multBy * discount";
  if (ranges > 0) std::cout << "; the checksums recorded for its " << ranges << " done range(s) match its bytes";
  std::cout << "\n";
  return 0;
}

int verify_job(const Config& config, bool sample) {
  VerifyOptions options;
  options.full = !sample;
  return verify_command(config, options);
}

}  // namespace discount
