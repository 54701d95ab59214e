// The deferred-write file driver: chunks stored by the file's own thread
// read back exact through HDF5's default driver; a failed store is reported.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cerrno>
#include <cstdint>
#include <random>
#include <vector>

#include "io/hdf5/deferred_driver.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using TempDir = discount::test_support::TempDir;

namespace {

// As the app does (crash_handler.cpp): no HDF5 clean-up at exit, which
// crashes in HDF5 1.10 on a file whose close failed.
const bool kNoCleanupAtExit = (H5dont_atexit(), true);

constexpr hsize_t kRows = 16384;  // one chunk: 16384 doubles, 128 KiB (stored by the writer)

// A 1-D chunked dataset of `chunks` chunks of `rows` doubles, no filters.
h5::Id make_dataset(hid_t file, const char* name, hsize_t chunks, hsize_t rows) {
  const hsize_t dims[1] = {chunks * rows}, chunk[1] = {rows};
  h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(dcpl.get(), 1, chunk);
  h5::Id space = h5::dataspace(H5Screate_simple(1, dims, nullptr));
  return h5::dataset(H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
}

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// Writes chunk `c` of `values` with H5Dwrite_chunk, its bytes handed over or copied.
herr_t write_chunk(hid_t dataset, const std::vector<double>& values, hsize_t c, hsize_t rows, bool hand_over) {
  const auto* first = reinterpret_cast<const std::uint8_t*>(values.data() + c * rows);
  std::vector<std::uint8_t> bytes(first, first + rows * sizeof(double));
  const hsize_t at[1] = {c * rows};
  const void* data = bytes.data();
  if (hand_over) h5::DeferredWrites::hand_over(std::move(bytes));
  const herr_t rc = H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, at, rows * sizeof(double), data);
  h5::DeferredWrites::take_back();
  return rc;
}

std::vector<double> read_all(const std::string& path, const char* name, std::size_t n) {
  std::vector<double> back(n, -1.0);
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id data = h5::dataset(H5Dopen2(file.get(), name, H5P_DEFAULT));
  EXPECT_GE(H5Dread(data.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
  return back;
}

}  // namespace

TEST(DeferredDriver, ChunksStoredByTheWriterReadBackExact) {
  if (!h5::DeferredWrites::available()) GTEST_SKIP() << "HDF5 other than 1.10: the driver is not built";
  TempDir dir;
  const std::string path = dir / "deferred.h5";
  const hsize_t chunks = 12, small_rows = 1000;  // small chunks: 8000 bytes, written at once
  const auto values = random_values(chunks * kRows, 7);
  const auto small = random_values(chunks * small_rows, 8);
  h5::DeferredWrites writes(2 * kRows * sizeof(double));  // two chunks in flight: HDF5 waits for the writer
  {
    h5::Id fapl = h5::plist(writes.file_access());
    ASSERT_TRUE(fapl);
    h5::Id file = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    ASSERT_TRUE(file);
    h5::Id big = make_dataset(file.get(), "big", chunks, kRows);
    h5::Id little = make_dataset(file.get(), "little", chunks, small_rows);
    for (hsize_t c = 0; c < chunks; ++c) {
      ASSERT_GE(write_chunk(big.get(), values, c, kRows, c % 2 == 0), 0) << "chunk " << c;
      ASSERT_GE(write_chunk(little.get(), small, c, small_rows, false), 0) << "small chunk " << c;
    }
    big.reset();
    little.reset();
    ASSERT_TRUE(file.close());
  }
  EXPECT_EQ(writes.error(), "");
  EXPECT_GT(writes.busy_seconds(), 0.0);  // the big chunks went through the writer
  EXPECT_EQ(read_all(path, "big", values.size()), values);
  EXPECT_EQ(read_all(path, "little", small.size()), small);
}

TEST(DeferredDriver, AFailedStoreFailsTheCloseAndSaysWhy) {
  if (!h5::DeferredWrites::available()) GTEST_SKIP() << "HDF5 other than 1.10: the driver is not built";
  TempDir dir;
  const std::string path = dir / "too_large.h5";
  const auto values = random_values(8 * kRows, 9);
  h5::DeferredWrites writes(kRows * sizeof(double));
  // Files may not grow past 300 KiB: the third chunk's store fails (EFBIG).
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old;
  limit.rlim_cur = 300 << 10;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  bool failed = false;
  {
    h5::QuietErrors quiet;
    h5::Id fapl = h5::plist(writes.file_access());
    h5::Id file = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    h5::Id big = make_dataset(file.get(), "big", 8, kRows);
    for (hsize_t c = 0; c < 8 && !failed; ++c) failed = write_chunk(big.get(), values, c, kRows, true) < 0;
    big.reset();
    failed = !file.close() || failed;
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(failed);
  EXPECT_EQ(writes.error_number(), EFBIG);
  EXPECT_NE(writes.error().find("File too large"), std::string::npos) << writes.error();
}
