// The output's history attribute (io/output_coords.hpp).
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

#include "support/temp_dir.hpp"

using namespace discount;

TEST(OutputCoords, HistoryPutsTheNewestLineFirst) {
  EXPECT_EQ(history_with("", "b"), "b");
  EXPECT_EQ(history_with("a", "b"), "b\na");
}
