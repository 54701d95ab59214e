// Text attributes as variable-length UTF-8 (io/hdf5/attributes.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "io/hdf5/attributes.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/records/checksum.hpp"
#include "io/output/output_coords.hpp"
#include "plan/stages.hpp"

#include "support/temp_dir.hpp"

using namespace discount;

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
