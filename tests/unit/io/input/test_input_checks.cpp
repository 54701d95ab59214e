// Damaged-input checks, reads cut into bounded pieces, the crash line.
#include <gtest/gtest.h>
#include <signal.h>

#include <set>
#include <tuple>

#include "common/crash_handler.hpp"
#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/input_checks.hpp"

namespace discount {
namespace {

std::uint64_t chunks_of(const SubBox& box, const std::vector<hsize_t>& chunk) {
  std::uint64_t n = 1;
  for (std::size_t j = 0; j < chunk.size(); ++j)
    n *= (box.start[j] + box.count[j] - 1) / chunk[j] - box.start[j] / chunk[j] + 1;
  return n;
}

TEST(ChunkBoundedBoxes, CoverTheBoxOnceWithinTheChunkCount) {
  const std::vector<std::tuple<std::vector<hsize_t>, std::vector<hsize_t>, std::vector<hsize_t>, std::uint64_t>> cases{
      {{3, 5, 0}, {7, 1013, 5}, {1, 16, 1}, 64},
      {{0, 0, 0}, {9, 40001, 5}, {1, 16, 1}, 64},
      {{2, 17, 1}, {3, 50, 4}, {2, 8, 5}, 5},
      {{0, 0, 0}, {1, 1, 1}, {4, 4, 4}, 1},
      {{1, 3, 0}, {5, 7, 5}, {1, 1, 1}, 1}};
  for (const auto& [start, count, chunk, max_chunks] : cases) {
    const auto boxes = chunk_bounded_boxes(start, count, chunk, max_chunks);
    std::set<std::tuple<hsize_t, hsize_t, hsize_t>> seen;
    std::uint64_t total = 0;
    for (const SubBox& b : boxes) {
      EXPECT_LE(chunks_of(b, chunk), max_chunks);
      for (hsize_t a = 0; a < b.count[0]; ++a)
        for (hsize_t c = 0; c < b.count[1]; ++c)
          for (hsize_t e = 0; e < b.count[2]; ++e) {
            const auto p = std::make_tuple(b.start[0] + a, b.start[1] + c, b.start[2] + e);
            EXPECT_GE(std::get<0>(p), start[0]);
            EXPECT_LT(std::get<0>(p), start[0] + count[0]);
            EXPECT_GE(std::get<1>(p), start[1]);
            EXPECT_LT(std::get<1>(p), start[1] + count[1]);
            EXPECT_TRUE(seen.insert(p).second);
            ++total;
          }
    }
    EXPECT_EQ(total, count[0] * count[1] * count[2]);
  }
}

TEST(ChunkBoundedBoxes, ContiguousIsOneBox) {
  const auto boxes = chunk_bounded_boxes({1, 2, 0}, {3, 4, 5}, {}, 64);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].count, (std::vector<hsize_t>{3, 4, 5}));
}

TEST(CrashLine, NamesTheHdf5ReadOrSaysBug) {
  const std::string inside = crash::crash_line(SIGSEGV, "reading dataset 'discount' of file 'in.h5'");
  EXPECT_EQ(inside,
            "discount_app: error: crashed (SIGSEGV) inside the HDF5 library while reading dataset 'discount' of file "
            "'in.h5'; the file is likely damaged: check it with h5dump");
  const std::string bug = crash::crash_line(SIGBUS, "");
  EXPECT_EQ(bug.rfind("discount_app: error: crashed (SIGBUS); this is a bug, please report", 0), 0u) << bug;
  EXPECT_EQ(bug.find('\n'), std::string::npos);
}

TEST(Hdf5Errors, ClassifiesOpenAndReadFailures) {
  EXPECT_EQ(h5::open_failure("truncated file: eof = 1, sblock->base_addr = 0, stored_eof = 2; unable to open file"),
            h5::OpenFailure::truncated);
  EXPECT_EQ(h5::open_failure("unable to lock file, errno = 11, error message = 'Resource temporarily unavailable'"),
            h5::OpenFailure::locked);
  EXPECT_EQ(h5::open_failure("file signature not found"), h5::OpenFailure::other);
  EXPECT_TRUE(h5::read_failure_is_damage("inflate() failed; filter returned failure during read"));
  EXPECT_TRUE(h5::read_failure_is_damage("data error detected by Fletcher32 checksum"));
  EXPECT_FALSE(h5::read_failure_is_damage("file read failed: errno = 5, error message = 'Input/output error'"));
}

TEST(FloatLayout, IeeeAcceptedOtherBiasRefused) {
  // Named first: nvcc misreads HDF5's type macros (comma expressions) in a braced list.
  const hid_t f64le = H5T_IEEE_F64LE, f32be = H5T_IEEE_F32BE, native = H5T_NATIVE_DOUBLE;
  for (hid_t t : {f64le, f32be, native}) EXPECT_NO_THROW(check_float_layout(t, "x"));
  h5::Id odd = h5::datatype(H5Tcopy(H5T_IEEE_F64LE));
  ASSERT_GE(H5Tset_ebias(odd.get(), 123), 0);
  try {
    check_float_layout(odd.get(), "input.discount: dataset 'discount' in 'in.h5'");
    FAIL() << "no refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::data_invalid);
    EXPECT_NE(std::string(e.what()).find("IEEE"), std::string::npos) << e.what();
  }
  h5::Id unnormalized = h5::datatype(H5Tcopy(H5T_IEEE_F32LE));
  ASSERT_GE(H5Tset_norm(unnormalized.get(), H5T_NORM_NONE), 0);
  EXPECT_THROW(check_float_layout(unnormalized.get(), "x"), Error);
}

}  // namespace
}  // namespace discount
