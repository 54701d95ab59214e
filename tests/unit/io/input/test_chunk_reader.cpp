// ChunkReader (io/input/chunk_reader.hpp): memory.staging: none's pieces of a compressed input
// (read_range through InputSource::read_discount_range): every piece, cut anywhere, equals
// what HDF5's own filter pipeline reads for the same elements.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/input/input.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using TempDir = discount::test_support::TempDir;

namespace {

constexpr hsize_t kDates = 4, kIds = 30011, kNums = 5;  // edge chunks along ids

// multBy contiguous, discount chunked (chunk_dates, chunk_ids, kNums) with
// shuffle + deflate, random non-zero values; dates 1 and 3 after id 20000
// never written (the fill value 2.5).
std::string write_input(const TempDir& dir, const std::string& name, hid_t type, hsize_t chunk_dates,
                        hsize_t chunk_ids) {
  const std::string path = dir / name;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> value(0.25, 4.0);
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<double> mult(kIds * kNums);
  for (double& v : mult) v = value(rng);
  const hsize_t mdims[2] = {kIds, kNums};
  hid_t mspace = H5Screate_simple(2, mdims, nullptr);
  hid_t m = H5Dcreate2(file, "multBy", H5T_IEEE_F64LE, mspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(m, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, mult.data());
  const hsize_t dims[3] = {kDates, kIds, kNums}, chunk[3] = {chunk_dates, chunk_ids, kNums};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, 4);
  const double fill = 2.5;
  H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
  hid_t space = H5Screate_simple(3, dims, nullptr);
  hid_t d = H5Dcreate2(file, "discount", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  std::vector<double> row(kIds * kNums);
  for (hsize_t date = 0; date < kDates; ++date) {
    for (double& v : row) v = value(rng);
    const hsize_t start[3] = {date, 0, 0}, count[3] = {1, date % 2 ? 20000 : kIds, kNums};
    hid_t mem = H5Screate_simple(3, count, nullptr);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, row.data());
    H5Sclose(mem);
  }
  for (hid_t id : {d, m}) H5Dclose(id);
  for (hid_t id : {space, mspace}) H5Sclose(id);
  H5Pclose(dcpl);
  H5Fclose(file);
  return path;
}

// HDF5's own read of discount[dates][ids][:], as float64.
std::vector<double> hdf5_read(const std::string& path, Range dates, Range ids) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(file, "discount", H5P_DEFAULT);
  hid_t space = H5Dget_space(d);
  const hsize_t start[3] = {static_cast<hsize_t>(dates.begin), static_cast<hsize_t>(ids.begin), 0},
                count[3] = {static_cast<hsize_t>(dates.size()), static_cast<hsize_t>(ids.size()), kNums};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t mem = H5Screate_simple(3, count, nullptr);
  std::vector<double> values(count[0] * count[1] * count[2]);
  EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, values.data()), 0);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(file);
  return values;
}

std::unique_ptr<InputSource> open(const std::string& path) {
  InputConfig in;
  in.file = path;
  return open_hdf5_input(in);
}

// Reads the box in pieces of random sizes (1 element to three chunks) in
// order, each into a poisoned buffer of its own size, and compares each
// with HDF5's values.
void expect_pieces_exact(InputSource& source, const std::vector<double>& want, Range dates, Range ids,
                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> size(1, 3 * 10000 * static_cast<std::int64_t>(kNums));
  const auto total = static_cast<std::int64_t>(want.size());
  std::vector<double> piece;
  for (std::int64_t first = 0; first < total;) {
    const std::int64_t n = std::min(size(rng), total - first);
    piece.assign(static_cast<std::size_t>(n), -7.0);
    source.read_discount_range(dates, ids, first, n, piece.data());
    ASSERT_TRUE(std::equal(piece.begin(), piece.end(), want.begin() + first))
        << "piece [" << first << ", " << first + n << ") of dates [" << dates.begin << ", " << dates.end << ") ids ["
        << ids.begin << ", " << ids.end << ")";
    first += n;
  }
}

}  // namespace

TEST(ChunkRanges, PiecesEqualHdf5sReadsFloat64AndFloat32) {
  TempDir dir;
  for (int k = 0; k < 2; ++k) {  // not a braced list of HDF5's type macros: nvcc cannot parse it
    const hid_t type = k == 0 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    const std::string path = write_input(dir, type == H5T_IEEE_F64LE ? "f64.h5" : "f32.h5", type, 1, 10000);
    const std::vector<std::pair<Range, Range>> boxes = {
        {{0, 4}, {0, 30011}}, {{1, 3}, {0, 30011}}, {{3, 4}, {5, 29999}}, {{0, 2}, {9999, 10001}}};
    // HDF5's reads first: the input keeps the file open with properties of its own.
    std::vector<std::vector<double>> want;
    for (const auto& [dates, ids] : boxes) want.push_back(hdf5_read(path, dates, ids));
    auto source = open(path);
    ASSERT_TRUE(source->reads_ranges()) << source->describe();
    for (std::size_t b = 0; b < boxes.size(); ++b)
      expect_pieces_exact(*source, want[b], boxes[b].first, boxes[b].second, b + 1);
    EXPECT_GT(source->decode_stats().chunks, 0U);
  }
}

TEST(ChunkRanges, ThreadsReadingAtOnceEachKeepTheirOwnChunk) {
  TempDir dir;
  const std::string path = write_input(dir, "in.h5", H5T_IEEE_F64LE, 1, 10000);
  // HDF5's reads first (HDF5 1.10 is not thread-safe, and the input keeps
  // the file open with properties of its own).
  std::vector<std::vector<double>> want;
  for (std::int64_t date = 0; date < static_cast<std::int64_t>(kDates); ++date)
    want.push_back(hdf5_read(path, {date, date + 1}, {0, static_cast<std::int64_t>(kIds)}));
  auto source = open(path);
  ASSERT_TRUE(source->reads_ranges());
  std::vector<std::thread> threads;
  for (std::int64_t date = 0; date < static_cast<std::int64_t>(kDates); ++date)
    threads.emplace_back([&, date] {
      const Range dates{date, date + 1}, ids{0, static_cast<std::int64_t>(kIds)};
      expect_pieces_exact(*source, want[static_cast<std::size_t>(date)], dates, ids,
                          100 + static_cast<std::uint64_t>(date));
    });
  for (auto& t : threads) t.join();
  // Each thread decoded each stored chunk of its date once: 4 where the date
  // was written whole, 2 where ids from 20000 on hold the fill value.
  EXPECT_EQ(source->decode_stats().chunks, 12U);
}

TEST(ChunkRanges, ChunksSeveralDatesThickAreNotReadInRanges) {
  TempDir dir;
  auto source = open(write_input(dir, "thick.h5", H5T_IEEE_F64LE, 2, 10000));
  EXPECT_FALSE(source->reads_ranges()) << source->describe();
  EXPECT_NE(source->describe().find("parallel chunk reads"), std::string::npos) << source->describe();
}
