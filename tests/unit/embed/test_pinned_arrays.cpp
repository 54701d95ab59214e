// Host arrays pinned in place (embed/pinned_arrays.hpp): which ranges count
// as pinned. Without a GPU nothing can be pinned and nothing is reported so.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "backend/gpu_runtime.hpp"
#include "embed/pinned_arrays.hpp"
#include "support/kokkos_env.hpp"

using namespace discount;

TEST(PinnedArrays, NothingIsPinnedWithoutAGpuOrForAnEmptyRange) {
  std::vector<double> values(1000, 1.0);
  EXPECT_FALSE(embed::pin_array(nullptr, 64));
  EXPECT_FALSE(embed::pin_array(values.data(), 0));
  EXPECT_EQ(embed::unpin_array(values.data()), 0u);  // never pinned
  if (!gpu::compiled_in()) {
    EXPECT_FALSE(embed::pin_array(values.data(), values.size() * sizeof(double)));
    EXPECT_FALSE(embed::array_is_pinned(values.data(), sizeof(double)));
    EXPECT_EQ(embed::pinned_array_bytes(), 0u);
    EXPECT_EQ(embed::unpin_all_arrays(), 0u);
  }
}

// A range is pinned when it lies inside one pinned range; a range that
// overlaps one partly is refused; unpinning returns each range's bytes.
TEST(PinnedArrays, RangesInsideOverlappingAndApart) {
  const std::size_t page = 4096, half = 37 * page;
  std::vector<char> block(2 * half + page);
  char* first = block.data();
  char* second = first + half;
  if (!embed::pin_array(first, half)) GTEST_SKIP() << "this build or machine cannot pin host memory";
  EXPECT_EQ(embed::pinned_array_bytes(), half);
  EXPECT_TRUE(embed::array_is_pinned(first, half));
  EXPECT_TRUE(embed::array_is_pinned(first + 100, 1000));
  EXPECT_FALSE(embed::array_is_pinned(first + 100, half));  // runs past its end
  EXPECT_FALSE(embed::array_is_pinned(second, 8));
  EXPECT_TRUE(embed::pin_array(first + page, page));              // inside: already pinned
  EXPECT_FALSE(embed::pin_array(first + half - page, 2 * page));  // overlaps its end: left alone
  EXPECT_EQ(embed::pinned_array_bytes(), half);
  ASSERT_TRUE(embed::pin_array(second, half));  // adjacent, apart
  EXPECT_EQ(embed::pinned_array_bytes(), 2 * half);
  EXPECT_FALSE(embed::array_is_pinned(first + half - 8, 16));  // across two ranges: not inside one
  EXPECT_EQ(embed::unpin_array(first), half);
  EXPECT_FALSE(embed::array_is_pinned(first, 8));
  EXPECT_TRUE(embed::array_is_pinned(second, half));
  EXPECT_EQ(embed::unpin_all_arrays(), half);
  EXPECT_EQ(embed::pinned_array_bytes(), 0u);
}
