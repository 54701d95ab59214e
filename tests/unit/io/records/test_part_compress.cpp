// What a compressed part declares and how it is cut (io/records/part_compress.hpp):
// the chunk shape, the filter pipeline HDF5 readers see, the header's text,
// the build's refusal of a codec it lacks, and a part's layout on disk.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/records/part_compress.hpp"
#include "support/temp_dir.hpp"

using namespace discount;
using discount::test_support::TempDir;
using Dims = std::array<std::int64_t, 3>;

namespace {

CompressionConfig config(Codec c, ShuffleKind s = ShuffleKind::byte, int level = -1,
                         std::vector<std::int64_t> chunks = {}) {
  CompressionConfig z;
  z.codec = c;
  z.shuffle = s;
  z.level = level;
  z.chunks = std::move(chunks);
  return z;
}

std::uint64_t chunk_bytes(const Dims& c, std::size_t element) {
  return static_cast<std::uint64_t>(c[0] * c[1] * c[2]) * element;
}

// A part file whose "cv" is contiguous, or chunked in `chunk`.
void make_part(const std::string& path, const Dims& d, const Dims* chunk) {
  h5::Id f = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  const hsize_t h[3] = {static_cast<hsize_t>(d[0]), static_cast<hsize_t>(d[1]), static_cast<hsize_t>(d[2])};
  h5::Id space = h5::dataspace(H5Screate_simple(3, h, nullptr));
  h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
  if (chunk) {
    const hsize_t c[3] = {static_cast<hsize_t>((*chunk)[0]), static_cast<hsize_t>((*chunk)[1]),
                          static_cast<hsize_t>((*chunk)[2])};
    ASSERT_GE(H5Pset_chunk(dcpl.get(), 3, c), 0);
  }
  h5::Id data =
      h5::dataset(H5Dcreate2(f.get(), "cv", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  ASSERT_TRUE(data);
}

}  // namespace

// auto: whole along the last axis, about 2 MiB (1 to 4 MiB), cut into even
// pieces so that no short chunk is stored padded.
TEST(PartCompress, AutoChunksAboutTwoMiBWholeAlongTheLastAxisEvenPieces) {
  const CompressionConfig z = config(Codec::zstd);
  for (std::size_t element : {std::size_t{8}, std::size_t{4}}) {
    const Dims big{12, 10000000, 5};
    const Dims c = output_chunks(z, big, element);
    EXPECT_EQ(c[2], 5);
    EXPECT_EQ(c[0], 1);
    EXPECT_GE(chunk_bytes(c, element), std::uint64_t{1} << 20);
    EXPECT_LE(chunk_bytes(c, element), std::uint64_t{4} << 20);
    // Even pieces along the ids: the last chunk is as long as the others
    // within one id per piece.
    const std::int64_t pieces = (big[1] + c[1] - 1) / c[1];
    EXPECT_LT(pieces * c[1] - big[1], pieces);
  }
  // A part smaller than a chunk is one chunk.
  EXPECT_EQ(output_chunks(z, Dims{3, 7, 5}, 8), (Dims{3, 7, 5}));
  // Few ids: several dates a chunk.
  const Dims few = output_chunks(z, Dims{1000, 1000, 5}, 8);
  EXPECT_EQ(few[1], 1000);
  EXPECT_GT(few[0], 1);
  EXPECT_LE(chunk_bytes(few, 8), std::uint64_t{4} << 20);
  // A wide last axis is cut too.
  const Dims wide = output_chunks(z, Dims{2, 2, 1 << 20}, 8);
  EXPECT_EQ(wide[0], 1);
  EXPECT_EQ(wide[1], 1);
  EXPECT_LE(chunk_bytes(wide, 8), std::uint64_t{4} << 20);
}

TEST(PartCompress, ConfiguredChunksClampedToThePart) {
  EXPECT_EQ(output_chunks(config(Codec::zstd, ShuffleKind::byte, -1, {2, 500, 5}), Dims{7, 300, 5}, 8),
            (Dims{2, 300, 5}));
  EXPECT_EQ(output_chunks(config(Codec::zstd, ShuffleKind::byte, -1, {0, 50, 99}), Dims{7, 300, 5}, 8),
            (Dims{1, 50, 5}));
}

// The filters in HDF5's order with the client data the standard filters and
// plugins expect: readers without the app decode what it declares.
TEST(PartCompress, PipelineDeclaresTheStandardFilters) {
  const codec::Pipeline deflate = output_pipeline(config(Codec::deflate), 8, 1 << 20);
  ASSERT_EQ(deflate.size(), 2u);
  EXPECT_EQ(deflate[0].id, 2);  // shuffle, element size
  EXPECT_EQ(deflate[0].values, (std::vector<unsigned>{8}));
  EXPECT_EQ(deflate[1].id, 1);  // deflate, the default level
  EXPECT_EQ(deflate[1].values, (std::vector<unsigned>{4}));

  const codec::Pipeline zstd = output_pipeline(config(Codec::zstd, ShuffleKind::none, 7), 4, 1 << 20);
  ASSERT_EQ(zstd.size(), 1u);
  EXPECT_EQ(zstd[0].id, 32015);
  EXPECT_EQ(zstd[0].values, (std::vector<unsigned>{7}));

  const codec::Pipeline lz4 = output_pipeline(config(Codec::lz4), 4, 1 << 20);
  ASSERT_EQ(lz4.size(), 2u);
  EXPECT_EQ(lz4[0].values, (std::vector<unsigned>{4}));
  EXPECT_EQ(lz4[1].id, 32004);

  // Blosc carries its own shuffle: one filter, hdf5-blosc's seven values.
  const codec::Pipeline blosc = output_pipeline(config(Codec::blosc, ShuffleKind::bit), 8, 3 << 20);
  ASSERT_EQ(blosc.size(), 1u);
  EXPECT_EQ(blosc[0].id, 32001);
  EXPECT_EQ(blosc[0].values, (std::vector<unsigned>{2, 2, 8, 3u << 20, 5, 2, 1}));
}

TEST(PartCompress, HeaderText) {
  EXPECT_EQ(describe_compression(config(Codec::zstd)), "zstd 3 + shuffle");
  EXPECT_EQ(describe_compression(config(Codec::deflate, ShuffleKind::none, 9)), "deflate 9");
  EXPECT_EQ(describe_compression(config(Codec::lz4)), "lz4 + shuffle");
  EXPECT_EQ(describe_compression(config(Codec::blosc, ShuffleKind::bit)), "blosc 5 + bitshuffle");
}

// A codec whose library this build lacks is refused as a configuration
// error (78) that names it; the ones it has pass.
TEST(PartCompress, CodecMissingFromTheBuildRefused) {
  EXPECT_NO_THROW(check_compression_available(config(Codec::none)));
  EXPECT_NO_THROW(check_compression_available(config(Codec::deflate)));
  for (Codec c : {Codec::zstd, Codec::lz4, Codec::blosc}) {
    const codec::Pipeline p = output_pipeline(config(c), 8, 1 << 20);
    const bool have = codec::unimplemented(p).empty();
    try {
      check_compression_available(config(c));
      EXPECT_TRUE(have) << codec_name(c) << " accepted without its library";
    } catch (const Error& e) {
      EXPECT_FALSE(have) << e.what();
      EXPECT_EQ(e.code(), ExitCode::config);
      EXPECT_NE(std::string(e.what()).find(codec_name(c)), std::string::npos) << e.what();
    }
  }
}

TEST(PartCompress, PartIsCompressedReadsTheLayout) {
  TempDir dir;
  const Dims d{4, 10, 5}, chunk{1, 10, 5};
  make_part(dir / "contiguous.h5", d, nullptr);
  make_part(dir / "chunked.h5", d, &chunk);
  EXPECT_FALSE(part_is_compressed(dir / "contiguous.h5"));
  EXPECT_TRUE(part_is_compressed(dir / "chunked.h5"));
  EXPECT_FALSE(part_is_compressed(dir / "missing.h5"));
}
