#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <iostream>

#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/synthetic.hpp"
#include "commands/commands.hpp"
#include "commands/tools.hpp"

namespace discount {

namespace {

using Fail = std::function<void(const std::string&)>;

// multBy [ids][nums]: random values, or amounts in cents.
void write_multiplier(hid_t file, const GenerateOptions& o, const Fail& fail) {
  const bool realistic = o.values == GeneratedValues::realistic;
  const hsize_t dims[2] = {hsize_t(o.ids), hsize_t(o.nums)};
  h5::Id space = h5::dataspace(H5Screate_simple(2, dims, nullptr));
  h5::Id ds =
      h5::dataset(H5Dcreate2(file, "multBy", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  std::vector<double> values(static_cast<std::size_t>(o.ids * o.nums));
  const std::uint64_t key = synthetic::key(o.seed, synthetic::multiplier);
  const std::uint64_t amount_key = synthetic::key(o.seed, synthetic::amount);
  host_parallel(static_cast<std::int64_t>(values.size()), io_threads(), [&](std::int64_t b, std::int64_t e, unsigned) {
    for (std::int64_t n = b; n < e; ++n)
      values[n] = realistic ? synthetic::cents_amount(amount_key, static_cast<std::uint64_t>(n))
                            : synthetic::value(key, static_cast<std::uint64_t>(n));
  });
  if (!ds || H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    fail("cannot write multBy");
}

// Rows [r0, r0 + rows) along the file's first axis of discount, in the file's
// axes order: random values, or discount factors exp(-r t) per (id, num).
void fill_discount_rows(const GenerateOptions& o, const std::int64_t e[3], std::int64_t r0, std::int64_t rows,
                        std::vector<double>& block) {
  const bool realistic = o.values == GeneratedValues::realistic;
  const std::uint64_t key = synthetic::key(o.seed, synthetic::discount);
  const std::uint64_t rate_key = synthetic::key(o.seed, synthetic::rate);
  block.resize(static_cast<std::size_t>(rows * e[1] * e[2]));
  host_parallel(rows * e[1], io_threads(), [&](std::int64_t b, std::int64_t end, unsigned) {
    for (std::int64_t ab = b; ab < end; ++ab) {
      const std::int64_t coord01[2] = {r0 + ab / e[1], ab % e[1]};
      for (std::int64_t c = 0; c < e[2]; ++c) {
        const std::int64_t coord[3] = {coord01[0], coord01[1], c};
        std::int64_t d = 0, i = 0, k = 0;
        for (int j = 0; j < 3; ++j) (o.axes[j] == Axis::date ? d : o.axes[j] == Axis::id ? i : k) = coord[j];
        const auto n = static_cast<std::uint64_t>((d * o.ids + i) * o.nums + k);
        const auto curve = static_cast<std::uint64_t>(i * o.nums + k);  // (id, num): its rate
        block[ab * e[2] + c] = realistic ? synthetic::discount_factor(synthetic::curve_rate(rate_key, curve), d)
                                         : synthetic::value(key, n);
      }
    }
  });
}

// discount in the requested axes order, written in blocks along the file's
// first axis. Returns the axes as the "axes" attribute names them.
std::string write_discount(hid_t file, const GenerateOptions& o, const std::int64_t e[3], const Fail& fail) {
  const hsize_t dims[3] = {hsize_t(e[0]), hsize_t(e[1]), hsize_t(e[2])};
  h5::Id space = h5::dataspace(H5Screate_simple(3, dims, nullptr));
  h5::Id ds =
      h5::dataset(H5Dcreate2(file, "discount", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!ds) fail("cannot create discount");
  std::string axes_text;
  for (Axis a : o.axes) axes_text += std::string(axes_text.empty() ? "" : ",") + axis_name(a);
  h5::write_string_attribute(ds.get(), "axes", axes_text);
  const std::int64_t rows_per_block = std::max<std::int64_t>(1, (std::int64_t{32} << 20) / 8 / (e[1] * e[2]));
  std::vector<double> block;
  for (std::int64_t r0 = 0; r0 < e[0]; r0 += rows_per_block) {
    const std::int64_t rows = std::min(rows_per_block, e[0] - r0);
    fill_discount_rows(o, e, r0, rows, block);
    const hsize_t start[3] = {hsize_t(r0), 0, 0}, count[3] = {hsize_t(rows), hsize_t(e[1]), hsize_t(e[2])};
    h5::Id file_space = h5::dataspace(H5Dget_space(ds.get()));
    h5::Id mem_space = h5::dataspace(H5Screate_simple(3, count, nullptr));
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
    if (H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, mem_space.get(), file_space.get(), H5P_DEFAULT, block.data()) < 0)
      fail("cannot write discount (disk full?)");
  }
  return axes_text;
}

}  // namespace

int generate_command(const GenerateOptions& o) {
  if (o.dates <= 0 || o.ids <= 0 || o.nums <= 0)
    throw usage_error("generate: --dates, --ids and --nums must be positive");
  if (o.axes.size() != 3) throw usage_error("generate: --axes must name date, id and num once each");
  struct stat st {};
  if (::stat(o.out.c_str(), &st) == 0 && !o.force)
    throw create_error("generate: '" + o.out + "' exists; pass --force to replace it");
  const std::string tmp = o.out + ".tmp";
  h5::QuietErrors quiet;
  h5::Id file = h5::file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  if (!file) throw create_error("generate: cannot create '" + tmp + "': " + std::strerror(errno));
  const Fail fail = [&](const std::string& what) {
    file.reset();
    ::unlink(tmp.c_str());
    throw io_error("generate: " + what);
  };
  auto extent = [&](Axis a) { return a == Axis::date ? o.dates : a == Axis::id ? o.ids : o.nums; };
  const std::int64_t e[3] = {extent(o.axes[0]), extent(o.axes[1]), extent(o.axes[2])};
  write_multiplier(file.get(), o, fail);
  const std::string axes_text = write_discount(file.get(), o, e, fail);
  if (!file.close()) {
    ::unlink(tmp.c_str());
    throw io_error("generate: cannot finish '" + tmp + "'");
  }
  if (::rename(tmp.c_str(), o.out.c_str()) != 0)
    throw io_error("generate: cannot rename to '" + o.out + "': " + std::strerror(errno));
  std::cout << "generate: wrote " << o.out << " multBy [" << o.ids << " x " << o.nums << "], discount [" << e[0]
            << " x " << e[1] << " x " << e[2] << "] (" << axes_text << "), seed " << o.seed
            << (o.values == GeneratedValues::realistic ? ", realistic values" : "") << "\n";
  return 0;
}

int generate_job(const GenerateOptions& options) { return generate_command(options); }

}  // namespace discount
