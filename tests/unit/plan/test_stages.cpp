// The bytes each stage moves for a slab, as stored on disk and in float64
// between (plan/stages.hpp). Pure: no Kokkos, no HDF5.
#include <gtest/gtest.h>

#include "plan/stages.hpp"

using namespace discount;

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
