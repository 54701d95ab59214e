// open_input's choice (synthetic, one HDF5 file, an input.file list) and a
// list of two files read back as one input.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "commands/tools.hpp"
#include "common/error.hpp"
#include "io/input/synthetic.hpp"
#include "io/lists/open_input.hpp"
#include "io/posix/box.hpp"

#include "support/temp_dir.hpp"

using namespace discount;
using TempDir = discount::test_support::TempDir;

namespace {

std::string generate(const TempDir& dir, const std::string& name, std::int64_t dates, std::int64_t ids,
                     std::uint64_t seed) {
  GenerateOptions g;
  g.dates = dates;
  g.ids = ids;
  g.nums = 2;
  g.seed = seed;
  g.out = dir / name;
  EXPECT_EQ(generate_command(g), 0);
  return g.out;
}

}  // namespace

TEST(OpenInput, SyntheticHasNoFile) {
  InputConfig in;
  in.synthetic = SyntheticSource{3, 4, 5, 7};
  auto source = open_input(in);
  EXPECT_EQ(source->shape().dates, 3);
  EXPECT_EQ(source->shape().ids, 4);
  EXPECT_EQ(source->shape().nums, 5);
  EXPECT_TRUE(source->hdf5_file().empty());
}

TEST(OpenInput, OneFileIsReadItself) {
  TempDir dir;
  InputConfig in;
  in.file = generate(dir, "one.h5", 3, 4, 1);
  auto source = open_input(in);
  EXPECT_EQ(source->shape().ids, 4);
  EXPECT_EQ(source->hdf5_file(), in.file);
}

// Two files split along id (their id extents differ), each with the multBy
// rows of its own ids: one input of both, the second file's rows after the first's.
TEST(OpenInput, ListSplitAlongIdReadsAsOne) {
  TempDir dir;
  InputConfig in;
  in.files = {generate(dir, "a.h5", 4, 3, 1), generate(dir, "b.h5", 4, 5, 2)};
  in.file = in.files.front();
  auto source = open_input(in);
  EXPECT_EQ(source->shape().dates, 4);
  EXPECT_EQ(source->shape().ids, 8);
  EXPECT_EQ(source->shape().nums, 2);
  EXPECT_NE(source->hdf5_file(), in.file);  // the virtual dataset's file

  const Range dates{0, 4}, ids{0, 8};
  const FileBox box = discount_box(source->shape(), source->axes(), dates, ids);
  std::vector<double> buffer(static_cast<std::size_t>(box.count[0] * box.count[1] * box.count[2]));
  source->read_discount(dates, ids, buffer.data());
  std::size_t wrong = 0, n = 0;
  for (std::int64_t d = 0; d < 4; ++d)
    for (std::int64_t i = 0; i < 8; ++i)
      for (std::int64_t k = 0; k < 2; ++k, ++n) {
        const bool first = i < 3;
        const std::int64_t own = first ? i : i - 3, ids_of_file = first ? 3 : 5;
        const auto key = synthetic::key(first ? 1 : 2, synthetic::discount);
        wrong += buffer[n] != synthetic::value(key, (d * ids_of_file + own) * 2 + k);
      }
  EXPECT_EQ(wrong, 0u);

  std::vector<double> mult(8 * 2);
  source->read_multiplier(ids, mult.data());
  EXPECT_EQ(mult[0], synthetic::value(synthetic::key(1, synthetic::multiplier), 0));
  EXPECT_EQ(mult[3 * 2], synthetic::value(synthetic::key(2, synthetic::multiplier), 0));
}

TEST(OpenInput, ListRefusesAMissingFileNamingIt) {
  TempDir dir;
  InputConfig in;
  in.files = {generate(dir, "a.h5", 4, 3, 1), dir / "gone.h5"};
  in.file = in.files.front();
  try {
    open_input(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::input_missing);
    EXPECT_NE(std::string(e.what()).find("gone.h5"), std::string::npos) << e.what();
  }
}
