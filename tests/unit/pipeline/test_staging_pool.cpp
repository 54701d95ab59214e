// The staging blocks kept between runs (pipeline/staging_pool.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#if defined(__linux__)
#include <malloc.h>
#endif

#include "common/error.hpp"
#include "backend/gpu_runtime.hpp"
#include "io/input/input.hpp"
#include "io/input/memory_arrays.hpp"
#include "io/output/output.hpp"
#include "io/input/synthetic.hpp"
#include "support/kokkos_env.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/staging_pool.hpp"
#include "plan/plan.hpp"
#include "ranks/ranks.hpp"
#include "resolve/resolve.hpp"

using namespace discount;

// The pool's rules on blocks that only know their size.
namespace {
struct FakeBlock {
  explicit FakeBlock(std::size_t b) : size(b) {}
  std::size_t bytes() const { return size; }
  void* data() const { return nullptr; }
  std::size_t size;
};
std::vector<std::unique_ptr<FakeBlock>> fake_blocks(std::initializer_list<std::size_t> sizes) {
  std::vector<std::unique_ptr<FakeBlock>> blocks;
  for (std::size_t b : sizes) blocks.push_back(std::make_unique<FakeBlock>(b));
  return blocks;
}
}  // namespace

TEST(StagingPool, KeepsOneRunsLargeBlocksAndHandsOutTheSmallestThatFits) {
  using pipeline_detail::kKeptBlockMinBytes;
  const std::size_t big = kKeptBlockMinBytes;
  pipeline_detail::StagingPool<FakeBlock> pool;
  auto run = fake_blocks({big, 3 * big, 100});
  pool.give_back(run);  // keeping is off: all freed
  EXPECT_TRUE(run.empty());
  EXPECT_EQ(pool.kept_bytes(), 0u);

  pool.set_keep(true);
  run = fake_blocks({big, 3 * big, 2 * big, 100});
  pool.give_back(run);
  EXPECT_EQ(pool.kept_bytes(), 6 * big);   // the 100-byte block is not kept
  EXPECT_EQ(pool.take(100), nullptr);      // small requests get a new block
  EXPECT_EQ(pool.take(7 * big), nullptr);  // nothing that large
  auto got = pool.take(2 * big - 1);       // the smallest that fits: 2 * big
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->bytes(), 2 * big);
  EXPECT_EQ(pool.take(big / 2 + big / 4), nullptr);  // below the minimum: a new block
  got = pool.take(big);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->bytes(), big);
  EXPECT_EQ(pool.kept_bytes(), 3 * big);  // what is left
}

TEST(StagingPool, AnotherRunReplacesTheKeptSetAndASmallRunLeavesIt) {
  using pipeline_detail::kKeptBlockMinBytes;
  const std::size_t big = kKeptBlockMinBytes;
  pipeline_detail::StagingPool<FakeBlock> pool;
  pool.set_keep(true);
  auto run = fake_blocks({4 * big, 4 * big});
  pool.give_back(run);
  EXPECT_EQ(pool.kept_bytes(), 8 * big);
  EXPECT_EQ(pool.take(big), nullptr);  // more than twice the request: not handed out
  run = fake_blocks({64});
  pool.give_back(run);  // a small run: the kept set stays
  EXPECT_EQ(pool.kept_bytes(), 8 * big);
  run = fake_blocks({big});
  pool.give_back(run);  // a run of its own large blocks: they replace the kept set
  EXPECT_EQ(pool.kept_bytes(), big);
  pool.clear();
  EXPECT_EQ(pool.kept_bytes(), 0u);
  run = fake_blocks({big});
  pool.give_back(run);
  EXPECT_EQ(pool.kept_bytes(), big);  // clear() left keeping on
  pool.set_keep(false);
  EXPECT_EQ(pool.kept_bytes(), 0u);
}
