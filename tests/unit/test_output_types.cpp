// The pieces of output.dtype and of the self-describing output: float32
// packing in place, checksums that do not depend on how a value is stored,
// stage bytes as stored, and attributes read back as written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "io/attributes.hpp"
#include "io/checksum.hpp"
#include "io/hdf5_handle.hpp"
#include "io/output_coords.hpp"
#include "io/stored_type.hpp"
#include "plan/stages.hpp"

#include "temp_dir.hpp"

using namespace discount;

namespace {

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(0.5, 2.0);
  std::uniform_int_distribution<int> exp(-30, 30), sign(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = std::ldexp(mag(rng), exp(rng)) * (sign(rng) ? -1.0 : 1.0);
  return v;
}

}  // namespace

TEST(StoredType, NarrowInPlaceRoundsOnceAndKeepsOrder) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1001}}) {
    const auto values = random_values(n, static_cast<unsigned>(n));
    auto work = values;
    const float* packed = narrow_in_place(work.data(), n);
    ASSERT_EQ(static_cast<const void*>(packed), static_cast<const void*>(work.data()));
    for (std::size_t i = 0; i < n; ++i) {
      const float want = static_cast<float>(values[i]);
      ASSERT_EQ(std::memcmp(&packed[i], &want, sizeof want), 0) << "element " << i << " of " << n;
    }
  }
}

TEST(StoredType, HalfwayCasesRoundToNearestEven) {
  // 1 + 2^-24 lies halfway between two floats: it rounds to even (1.0f);
  // 1 + 3 * 2^-24 rounds up. A rounding through another path would differ.
  std::vector<double> v{1.0 + std::ldexp(1.0, -24), 1.0 + 3 * std::ldexp(1.0, -24)};
  const float* f = narrow_in_place(v.data(), v.size());
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 1.0f + std::ldexp(1.0f, -22));
  EXPECT_EQ(stored_bytes(OutputType::float32), 4u);
  EXPECT_EQ(stored_bytes(OutputType::float64), 8u);
}

TEST(Checksum, FloatAndItsWidenedDoubleSumAlike) {
  const std::array<std::int64_t, 3> dims{5, 7, 3}, start{1, 2, 0}, count{3, 4, 3};
  const auto values = random_values(static_cast<std::size_t>(count[0] * count[1] * count[2]), 3);
  std::vector<float> narrow(values.size());
  std::vector<double> widened(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    narrow[i] = static_cast<float>(values[i]);
    widened[i] = narrow[i];
  }
  const auto f = box_sum(narrow.data(), dims, start, count, SumKey::output);
  EXPECT_EQ(f, box_sum(widened.data(), dims, start, count, SumKey::output));
  EXPECT_NE(f, box_sum(values.data(), dims, start, count, SumKey::output));  // the rounding shows
  narrow[5] = std::nextafter(narrow[5], 0.0f);
  EXPECT_NE(f, box_sum(narrow.data(), dims, start, count, SumKey::output));
}

TEST(Stages, ReadAndWriteCountBytesAsStored) {
  SlabTraffic t;
  t.elements = 1000;
  t.mult_elements = 30;
  t.mult_per_slab = true;
  t.input_bytes = 4;       // float32 discount
  t.mult_input_bytes = 2;  // uint16 multBy
  t.output_bytes = 4;      // output.dtype float32
  EXPECT_EQ(stage_bytes(Stage::read, t), 1000u * 4 + 30u * 2);
  EXPECT_EQ(stage_bytes(Stage::h2d, t), 1000u * 8 + 30u * 8);  // converted, in float64
  EXPECT_EQ(stage_bytes(Stage::d2h, t), 1000u * 8);
  EXPECT_EQ(stage_bytes(Stage::write, t), 1000u * 4);
  t.mult_per_slab = false;
  EXPECT_EQ(stage_bytes(Stage::read, t), 1000u * 4);
}

TEST(Attributes, TextIsVariableLengthUtf8AndReadsBackEitherWay) {
  discount::test_support::TempDir dir;
  const std::string path = dir.path() + "/a.h5";
  h5::Id file = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(file);
  h5::Id root = h5::group(H5Gopen2(file.get(), "/", H5P_DEFAULT));
  h5::write_text_attribute(root.get(), "title", "Zürich curves");
  h5::write_text_attribute(root.get(), "title", "Zürich curves, again");  // replaced, not added
  h5::Id attr = h5::attribute(H5Aopen(root.get(), "title", H5P_DEFAULT));
  h5::Id type = h5::datatype(H5Aget_type(attr.get()));
  EXPECT_GT(H5Tis_variable_str(type.get()), 0);
  EXPECT_EQ(H5Tget_cset(type.get()), H5T_CSET_UTF8);
  attr.reset();
  EXPECT_EQ(h5::read_text_attribute(root.get(), "title"), "Zürich curves, again");
  int attributes = 0;
  hsize_t at = 0;
  H5Aiterate2(
      root.get(), H5_INDEX_NAME, H5_ITER_INC, &at,
      [](hid_t, const char*, const H5A_info_t*, void* n) -> herr_t {
        ++*static_cast<int*>(n);
        return 0;
      },
      &attributes);
  EXPECT_EQ(attributes, 1);
  // A fixed-length one (netCDF's NC_CHAR) is copied as variable-length text.
  h5::Id fixed = h5::datatype(H5Tcopy(H5T_C_S1));
  H5Tset_size(fixed.get(), 5);
  h5::Id scalar = h5::dataspace(H5Screate(H5S_SCALAR));
  h5::Id units = h5::attribute(H5Acreate2(root.get(), "units", fixed.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_GE(H5Awrite(units.get(), fixed.get(), "years"), 0);
  units.reset();
  h5::write_int_attribute(root.get(), "DIMENSION_LIST", {1});  // structural: never copied
  h5::Id group = h5::group(H5Gcreate2(file.get(), "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  EXPECT_EQ(h5::copy_attributes(root.get(), group.get(), {"title"}), 1);
  EXPECT_EQ(h5::read_text_attribute(group.get(), "units"), "years");
  h5::Id copied = h5::attribute(H5Aopen(group.get(), "units", H5P_DEFAULT));
  h5::Id copied_type = h5::datatype(H5Aget_type(copied.get()));
  EXPECT_GT(H5Tis_variable_str(copied_type.get()), 0);
  EXPECT_LE(H5Aexists(group.get(), "title"), 0);
  EXPECT_LE(H5Aexists(group.get(), "DIMENSION_LIST"), 0);
}

TEST(OutputCoords, HistoryPutsTheNewestLineFirst) {
  EXPECT_EQ(history_with("", "b"), "b");
  EXPECT_EQ(history_with("a", "b"), "b\na");
}
