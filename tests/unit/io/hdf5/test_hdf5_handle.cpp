// HDF5 handles: dataset candidates in messages and setters that name the failing call.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <fstream>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/input.hpp"
#include "io/input/memory_arrays.hpp"
#include "io/output/output.hpp"
#include "io/records/output_parts.hpp"
#include "io/posix/posix_io.hpp"
#include "io/input/synthetic.hpp"
#include "commands/tools.hpp"

#include "support/temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using TempDir = discount::test_support::TempDir;

namespace {
// A dataset of zeros with the given shape, at `path` (groups created on the way).
void add_dataset(hid_t file, const std::string& path, std::vector<hsize_t> dims) {
  h5::Id lcpl = h5::plist(H5Pcreate(H5P_LINK_CREATE));
  ASSERT_GE(H5Pset_create_intermediate_group(lcpl.get(), 1), 0);
  h5::Id space = h5::dataspace(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  h5::Id ds =
      h5::dataset(H5Dcreate2(file, path.c_str(), H5T_NATIVE_DOUBLE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(ds) << path;
}
}  // namespace

// A missing dataset's message lists what the file holds that could be meant:
// by rank or element count, closest first, in groups too, at most 8.
TEST(Hdf5, DatasetCandidatesByRankAndSize) {
  TempDir dir;
  const std::string path = dir / "c.h5";
  {
    h5::Id f = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    add_dataset(f.get(), "/rates/disc", {12, 50, 5});
    add_dataset(f.get(), "/rates/mult", {50, 5});
    add_dataset(f.get(), "/flat", {250});
    add_dataset(f.get(), "/deep/a/b/notes", {2, 2});
    ASSERT_GE(H5Lcreate_soft("/rates/disc", f.get(), "/alias", H5P_DEFAULT, H5P_DEFAULT), 0);
  }
  h5::Id f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const auto all = h5::list_datasets(f.get());
  ASSERT_EQ(all.size(), 4u);  // the soft link is not listed twice
  EXPECT_EQ(h5::dataset_candidates(f.get(), 3), "; datasets of rank 3 there: /rates/disc [12 x 50 x 5]");
  // Size first (the flat one has 250 = 50 x 5 elements), then rank.
  EXPECT_EQ(h5::dataset_candidates(f.get(), 2, 250),
            "; datasets of rank 2 or 250 elements there: /rates/mult [50 x 5], /flat [250], /deep/a/b/notes [2 x 2]");
  EXPECT_EQ(h5::dataset_candidates(f.get(), 4),
            "; the file holds no dataset of rank 4 (it holds /deep/a/b/notes [2 x 2], /flat [250], "
            "/rates/disc [12 x 50 x 5], /rates/mult [50 x 5])");
  f.reset();
  {
    h5::Id many = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    for (int i = 0; i < 11; ++i) add_dataset(many.get(), "/d" + std::to_string(i), {3, 1, 1});
  }
  f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const std::string listed = h5::dataset_candidates(f.get(), 3);
  EXPECT_NE(listed.find(" and 3 more"), std::string::npos) << listed;
  f.reset();
  h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  f = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  EXPECT_EQ(h5::dataset_candidates(f.get(), 3), "; the file holds no datasets");
}

TEST(Hdf5, FailedSettersThrowNamingTheCall) {
  h5::QuietErrors quiet;
  try {
    h5::check(H5Pset_layout(H5I_INVALID_HID, H5D_CONTIGUOUS), "H5Pset_layout");
    FAIL() << "a failed H5Pset_layout went unnoticed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::internal);
    EXPECT_NE(std::string(e.what()).find("H5Pset_layout"), std::string::npos);
  }
  h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
  EXPECT_NO_THROW(h5::check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout"));
  // A value the library refuses: a chunked layout of rank 0.
  EXPECT_THROW(h5::check(H5Pset_chunk(dcpl.get(), 0, nullptr), "H5Pset_chunk"), Error);
}
