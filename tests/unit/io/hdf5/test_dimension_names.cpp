// Axes from netCDF dimension names (io/hdf5/dimension_names.hpp): which names are
// recognised, and how they meet input.axes and input.multiplier_axes.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "io/hdf5/dimension_names.hpp"

using namespace discount;

namespace {

const std::array<Axis, 3> kDIN{Axis::date, Axis::id, Axis::num}, kIDN{Axis::id, Axis::date, Axis::num};
const std::array<Axis, 2> kIN{Axis::id, Axis::num}, kNI{Axis::num, Axis::id};

InputAxes choose(const InputConfig& c, std::vector<std::string> disc, std::vector<std::string> mult,
                 std::vector<hsize_t> disc_dims = {7, 5, 3}, std::vector<hsize_t> mult_dims = {7, 3}) {
  return choose_input_axes(c, disc, mult, disc_dims, mult_dims, "disc", "mult");
}

ExitCode code_of(const InputConfig& c, std::vector<std::string> disc, std::vector<std::string> mult,
                 std::vector<hsize_t> disc_dims = {7, 5, 3}, std::vector<hsize_t> mult_dims = {7, 3}) {
  try {
    choose(c, disc, mult, disc_dims, mult_dims);
  } catch (const Error& e) { return e.code(); }
  return ExitCode::ok;
}

}  // namespace

TEST(DimensionNames, RecognisedNamesAnyCase) {
  for (const char* n : {"date", "Dates", "TIME", "times", "day", "Days"})
    EXPECT_EQ(axis_of_dimension(n), Axis::date) << n;
  for (const char* n : {"id", "IDS"}) EXPECT_EQ(axis_of_dimension(n), Axis::id) << n;
  for (const char* n : {"num", "Nums"}) EXPECT_EQ(axis_of_dimension(n), Axis::num) << n;
  for (const char* n : {"", "dim_0", "identifier", "number", "t"}) EXPECT_FALSE(axis_of_dimension(n)) << n;
}

TEST(DimensionNames, NamesFillUnsetAxes) {
  const InputAxes a = choose(InputConfig{}, {"id", "date", "num"}, {}, {7, 5, 3}, {7, 3});
  EXPECT_EQ(a.axes, kIDN);
  EXPECT_EQ(a.axes_from, "dimension names");
  EXPECT_EQ(a.multiplier_axes, kIN);
}

TEST(DimensionNames, GivenAxesWinOverNoNamesAndMustAgreeWithNames) {
  InputConfig c;
  c.axes = kIDN;
  c.axes_given = true;
  EXPECT_EQ(choose(c, {"", "", ""}, {}).axes, kIDN);
  EXPECT_EQ(choose(c, {"x", "y", "z"}, {}).axes, kIDN);
  EXPECT_EQ(choose(c, {"ids", "Time", "nums"}, {}).axes, kIDN);
  EXPECT_EQ(code_of(c, {"date", "id", "num"}, {}), ExitCode::data_invalid);
}

TEST(DimensionNames, UnrecognisedNamesIgnoredPartlyRecognisedRefused) {
  EXPECT_EQ(choose(InputConfig{}, {"dim_0", "dim_1", "dim_2"}, {}).axes, kDIN);
  EXPECT_EQ(code_of(InputConfig{}, {"when", "id", "num"}, {}), ExitCode::data_invalid);
  EXPECT_EQ(code_of(InputConfig{}, {"id", "id", "num"}, {}), ExitCode::data_invalid);
}

TEST(DimensionNames, MultiplierOrientation) {
  // Default axes [date, id, num] on [5 x 7 x 3]: ids 7, nums 3.
  const std::vector<hsize_t> disc{5, 7, 3};
  EXPECT_EQ(choose(InputConfig{}, {}, {}, disc, {7, 3}).multiplier_axes, kIN);
  const InputAxes by_shape = choose(InputConfig{}, {}, {}, disc, {3, 7});
  EXPECT_EQ(by_shape.multiplier_axes, kNI);
  EXPECT_EQ(by_shape.multiplier_from, "shape");
  // Square: the shape cannot tell, the default holds unless the key or the names say.
  EXPECT_EQ(choose(InputConfig{}, {}, {}, {5, 3, 3}, {3, 3}).multiplier_axes, kIN);
  EXPECT_EQ(choose(InputConfig{}, {}, {"nums", "ids"}, {5, 3, 3}, {3, 3}).multiplier_axes, kNI);
  InputConfig c;
  c.multiplier_axes = kNI;
  EXPECT_EQ(choose(c, {}, {}, {5, 3, 3}, {3, 3}).multiplier_axes, kNI);
  EXPECT_EQ(code_of(c, {}, {"id", "num"}, disc, {7, 3}), ExitCode::data_invalid);
  // A given [id, num] is kept even where only [num, id] fits: the reader then refuses it, saying so.
  c.multiplier_axes = kIN;
  EXPECT_EQ(choose(c, {}, {}, disc, {3, 7}).multiplier_axes, kIN);
}
