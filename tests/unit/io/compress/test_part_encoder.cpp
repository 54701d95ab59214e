// output.compression's encoders (io/compress/part_encoder.hpp): contiguous
// parts stored again as compressed chunks, read back through HDF5's own
// filters as an independent reader.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "io/compress/part_encoder.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/records/part_compress.hpp"
#include "support/output_files.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using discount::test_support::read_all;
using discount::test_support::TempDir;
using Dims = std::array<std::int64_t, 3>;

namespace {

std::size_t count(const Dims& d) { return static_cast<std::size_t>(d[0] * d[1] * d[2]); }

// Random non-zero values, rounded as realistic factors are (they compress).
std::vector<double> values_for(const Dims& d, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> v(count(d));
  for (double& x : v) x = static_cast<double>(static_cast<std::int64_t>(u(gen) * 1e6)) * 1e-6;
  return v;
}

// A contiguous part as the run writes one: dataset "cv" of `d`, its values.
void write_part(const std::string& path, const Dims& d, OutputType t, const std::vector<double>& v) {
  h5::Id f = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  const hsize_t h[3] = {static_cast<hsize_t>(d[0]), static_cast<hsize_t>(d[1]), static_cast<hsize_t>(d[2])};
  h5::Id space = h5::dataspace(H5Screate_simple(3, h, nullptr));
  h5::Id data = h5::dataset(H5Dcreate2(f.get(), "cv", t == OutputType::float32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                                       space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(data);
  ASSERT_GE(H5Dwrite(data.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
}

// Every value of the part's "cv" through HDF5 (its filters if chunked; HDF5
// widens float32 exactly).
std::vector<double> read_part(const std::string& path) {
  register_codec_filters();
  return read_all(path, "cv");
}

H5D_layout_t layout_of(const std::string& path) {
  h5::Id f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id d = f ? h5::dataset(H5Dopen2(f.get(), "cv", H5P_DEFAULT)) : h5::Id{};
  h5::Id dcpl = d ? h5::plist(H5Dget_create_plist(d.get())) : h5::Id{};
  return dcpl ? H5Pget_layout(dcpl.get()) : H5D_LAYOUT_ERROR;
}

std::vector<double> as_stored(std::vector<double> v, OutputType t) {
  if (t == OutputType::float32)
    for (double& x : v) x = static_cast<float>(x);
  return v;
}

CompressionConfig config(Codec c, ShuffleKind s, std::vector<std::int64_t> chunks) {
  CompressionConfig z;
  z.codec = c;
  z.shuffle = s;
  z.chunks = std::move(chunks);
  return z;
}

struct Parts {
  std::vector<PartToCompress> list;
  std::vector<std::vector<double>> values;
};

Parts make_parts(const TempDir& dir, const std::vector<Dims>& dims, OutputType t) {
  Parts p;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::string path = dir / ("part-0000" + std::to_string(i) + ".h5");
    p.values.push_back(values_for(dims[i], 11 + static_cast<unsigned>(i)));
    write_part(path, dims[i], t, p.values.back());
    p.list.push_back({path, dims[i]});
  }
  return p;
}

std::uint64_t storage_size(const std::string& path) {
  h5::Id f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id d = h5::dataset(H5Dopen2(f.get(), "cv", H5P_DEFAULT));
  return d ? H5Dget_storage_size(d.get()) : 0;
}

bool exists(const std::string& path) { return fs::exists(fs::symlink_status(path)); }

}  // namespace

// Uneven edges along every axis, both element types, two codecs: each part
// becomes chunked and reads back, through HDF5's filters, exactly as written.
TEST(CompressParts, FinishedPartsReadBackExactThroughHdf5) {
  struct Case {
    OutputType type;
    CompressionConfig z;
  };
  const std::vector<Case> cases = {{OutputType::float64, config(Codec::zstd, ShuffleKind::byte, {2, 5, 3})},
                                   {OutputType::float32, config(Codec::deflate, ShuffleKind::byte, {3, 4, 5})},
                                   {OutputType::float64, config(Codec::deflate, ShuffleKind::none, {})}};
  for (const Case& c : cases) {
    TempDir dir;
    const std::vector<Dims> dims = {Dims{7, 13, 5}, Dims{4, 13, 5}};
    Parts p = make_parts(dir, dims, c.type);
    const CompressStats s = compress_parts(p.list, c.type, c.z);
    EXPECT_EQ(s.parts, 2u);
    EXPECT_EQ(s.raw_bytes, (count(dims[0]) + count(dims[1])) * stored_bytes(c.type));
    std::uint64_t stored = 0;  // what HDF5 says the parts' chunks take
    for (const auto& part : p.list) stored += storage_size(part.path);
    EXPECT_EQ(s.stored_bytes, stored);
    for (std::size_t i = 0; i < p.list.size(); ++i) {
      EXPECT_EQ(read_part(p.list[i].path), as_stored(p.values[i], c.type)) << p.list[i].path;
      EXPECT_EQ(layout_of(p.list[i].path), H5D_CHUNKED);
      EXPECT_TRUE(part_is_compressed(p.list[i].path));
      EXPECT_FALSE(exists(p.list[i].path + ".z.tmp"));
    }
  }
}

// Chunks whose values lie in the part in one long run, in a long run per
// first-axis step, and in short runs across the last axis: each gathered
// exactly (long runs are read with pread, short ones copied), edges padded.
TEST(CompressParts, ChunksGatheredFromLongAndShortRuns) {
  const Dims dims{5, 5000, 5};
  const std::vector<std::vector<std::int64_t>> shapes = {
      {1, 5000, 5},  // one run of 200 kB per chunk
      {2, 5000, 5},  // whole planes: one run of 400 kB, the last chunk padded
      {2, 2100, 5},  // a run of 84 kB per date, edges along both axes
      {3, 1700, 4},  // 32-byte runs, the last axis cut
  };
  for (const auto& shape : shapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    TempDir dir;
    Parts p = make_parts(dir, {dims}, OutputType::float64);
    compress_parts(p.list, OutputType::float64, config(Codec::deflate, ShuffleKind::byte, shape));
    EXPECT_EQ(layout_of(p.list[0].path), H5D_CHUNKED);
    EXPECT_EQ(read_part(p.list[0].path), p.values[0]);
  }
}

// The stream takes units in any order and in pieces that cut chunks; each
// part is renamed exactly once, only after it is whole and durable, and
// reads back exact. Units along the first axis, and along the second.
TEST(PartStream, UnitsInAnyOrderEachPartRenamedOnceAndExact) {
  for (int unit_axis : {0, 1}) {
    TempDir dir;
    const std::vector<Dims> dims = {Dims{5, 9, 5}, Dims{3, 7, 5}, Dims{6, 2, 5}};
    Parts p = make_parts(dir, dims, OutputType::float64);
    std::vector<std::atomic<int>> renames(dims.size());
    {
      PartStream stream(p.list, unit_axis, OutputType::float64, config(Codec::zstd, ShuffleKind::byte, {2, 3, 5}),
                        [&](std::size_t i) { ++renames.at(i); });
      for (std::size_t i = 0; i < dims.size(); ++i) {
        const std::int64_t units = dims[i][static_cast<std::size_t>(unit_axis)];
        // The last unit first, then the rest one at a time from the front.
        stream.written(i, units - 1, units);
        for (std::int64_t u = 0; u + 1 < units; ++u) stream.written(i, u, u + 1);
        stream.durable(i);
      }
      const CompressStats s = stream.finish();
      EXPECT_EQ(s.parts, dims.size());
      EXPECT_GT(s.stored_bytes, 0u);
    }
    for (std::size_t i = 0; i < dims.size(); ++i) {
      EXPECT_EQ(renames[i].load(), 1) << "part " << i << ", unit axis " << unit_axis;
      EXPECT_EQ(read_part(p.list[i].path), p.values[i]) << p.list[i].path;
      EXPECT_EQ(layout_of(p.list[i].path), H5D_CHUNKED);
      EXPECT_FALSE(exists(p.list[i].path + ".z.tmp"));
    }
  }
}

// A part whose units were never all recorded durable is never replaced: the
// stream ended early leaves it contiguous and exact, its `.z.tmp` gone; the
// part made durable is whole in one form or the other.
TEST(PartStream, PartNotDurableStaysContiguous) {
  TempDir dir;
  const std::vector<Dims> dims = {Dims{4, 6, 5}, Dims{4, 6, 5}};
  Parts p = make_parts(dir, dims, OutputType::float64);
  std::atomic<int> renamed_first{0};
  {
    PartStream stream(p.list, 0, OutputType::float64, config(Codec::deflate, ShuffleKind::byte, {1, 6, 5}),
                      [&](std::size_t i) { renamed_first += i == 0; });
    for (std::size_t i = 0; i < dims.size(); ++i) stream.written(i, 0, dims[i][0]);
    stream.durable(1);
  }  // destroyed without finish(), as a stopping run's checkpoint ends it
  EXPECT_EQ(renamed_first.load(), 0);
  EXPECT_EQ(read_part(p.list[0].path), p.values[0]);
  EXPECT_EQ(layout_of(p.list[0].path), H5D_CONTIGUOUS);
  EXPECT_FALSE(part_is_compressed(p.list[0].path));
  EXPECT_EQ(read_part(p.list[1].path), p.values[1]);
  for (const auto& part : p.list) EXPECT_FALSE(exists(part.path + ".z.tmp")) << part.path;
}

// A `.z.tmp` that cannot be made stops the stream before it starts, naming
// the part; every part stays as it was and no temporary file is left.
TEST(PartStream, UnmakeableTemporaryFileRefusedNamingThePart) {
  TempDir dir;
  const std::vector<Dims> dims = {Dims{3, 4, 5}, Dims{3, 4, 5}};
  Parts p = make_parts(dir, dims, OutputType::float64);
  const std::string blocked = p.list[1].path + ".z.tmp";
  fs::create_directory(blocked);
  std::ofstream(blocked + "/keep") << "not the app's";
  try {
    PartStream stream(p.list, 0, OutputType::float64, config(Codec::zstd, ShuffleKind::byte, {}),
                      [](std::size_t) { ADD_FAILURE() << "nothing may be renamed"; });
    ADD_FAILURE() << "the stream started";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::io_error);
    EXPECT_NE(std::string(e.what()).find(p.list[1].path), std::string::npos) << e.what();
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    EXPECT_EQ(read_part(p.list[i].path), p.values[i]);
    EXPECT_EQ(layout_of(p.list[i].path), H5D_CONTIGUOUS);
  }
  EXPECT_FALSE(exists(p.list[0].path + ".z.tmp"));
  EXPECT_TRUE(exists(blocked + "/keep"));  // what the app did not make stays
}
