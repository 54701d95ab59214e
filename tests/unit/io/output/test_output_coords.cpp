// The output's history attribute (io/output/output_coords.hpp).
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

TEST(OutputCoords, HistoryPutsTheNewestLineFirst) {
  EXPECT_EQ(history_with("", "b"), "b");
  EXPECT_EQ(history_with("a", "b"), "b\na");
}
