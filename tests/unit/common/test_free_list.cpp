// Objects kept for reuse (common/free_list.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/free_list.hpp"

using namespace discount;

// What is given comes back, its capacity kept; past `most` it is dropped;
// an empty list hands back a default-made one.
TEST(FreeList, GivesBackWhatItKeptUpToMost) {
  FreeList<std::vector<std::uint8_t>> list(2);
  EXPECT_EQ(list.take().capacity(), 0u);
  for (std::size_t size : {100u, 200u, 300u}) list.give(std::vector<std::uint8_t>(size, 7));
  std::vector<std::size_t> back;
  for (int i = 0; i < 3; ++i) back.push_back(list.take().size());
  EXPECT_EQ(back, (std::vector<std::size_t>{200, 100, 0}));
}

TEST(FreeList, EmptyPointersWhenNoneKept) {
  FreeList<std::unique_ptr<int>> list;
  EXPECT_EQ(list.take(), nullptr);
  list.give(std::make_unique<int>(5));
  std::unique_ptr<int> p = list.take();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);
  EXPECT_EQ(list.take(), nullptr);
}
