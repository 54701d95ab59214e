// HDF5 input read back in every axes order, and its documented error codes.
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

#include "support/output_files.hpp"

using namespace discount::test_support;

TEST(Io, GenerateThenReadBoxesInEveryAxesOrder) {
  TempDir dir;
  for (const char* order : {"date,id,num", "id,date,num", "num,id,date"}) {
    GenerateOptions g;
    g.dates = 5;
    g.ids = 11;
    g.nums = 3;
    g.seed = 42;
    g.out = dir / (std::string("in_") + order[0] + ".h5");
    InputConfig in;
    in.file = g.out;
    const std::string text = order;
    std::vector<Axis> axes;
    for (std::size_t s = 0; s <= text.size();) {
      auto c = text.find(',', s);
      auto w = text.substr(s, c == std::string::npos ? std::string::npos : c - s);
      axes.push_back(w == "date" ? Axis::date : w == "id" ? Axis::id : Axis::num);
      if (c == std::string::npos) break;
      s = c + 1;
    }
    g.axes = axes;
    ASSERT_EQ(generate_command(g), 0);
    std::copy(axes.begin(), axes.end(), in.axes.begin());
    auto source = open_hdf5_input(in);
    EXPECT_EQ(source->shape().dates, 5);
    EXPECT_EQ(source->shape().ids, 11);
    EXPECT_EQ(source->shape().nums, 3);
    // A box in the middle, packed in file order, must hold the formula's values.
    const Range dates{1, 4}, ids{2, 9};
    const FileBox box = discount_box(source->shape(), source->axes(), dates, ids);
    std::vector<double> buffer(static_cast<std::size_t>(box.count[0] * box.count[1] * box.count[2]), std::nan(""));
    source->read_discount(dates, ids, buffer.data());
    const auto key = synthetic::key(42, synthetic::discount);
    std::size_t n = 0, wrong = 0;
    for (std::int64_t a = 0; a < box.count[0]; ++a)
      for (std::int64_t b = 0; b < box.count[1]; ++b)
        for (std::int64_t c = 0; c < box.count[2]; ++c, ++n) {
          const std::int64_t pos[3] = {box.start[0] + a, box.start[1] + b, box.start[2] + c};
          std::int64_t logical[3];
          for (int j = 0; j < 3; ++j) logical[static_cast<int>(axes[j])] = pos[j];
          const double expected = synthetic::value(key, (logical[0] * 11 + logical[1]) * 3 + logical[2]);
          wrong += expected != buffer[n];
        }
    EXPECT_EQ(wrong, 0u) << order;
    std::vector<double> mult(7 * 3);
    source->read_multiplier(ids, mult.data());
    EXPECT_EQ(mult[0], synthetic::value(synthetic::key(42, synthetic::multiplier), 2 * 3));
  }
}

TEST(Io, InputErrorsCarryTheDocumentedCodes) {
  TempDir dir;
  InputConfig in;
  in.file = dir / "missing.h5";
  try {
    open_hdf5_input(in);
    FAIL();
  } catch (const Error& e) { EXPECT_EQ(e.code(), ExitCode::input_missing); }
  {
    FILE* f = std::fopen((dir / "text.h5").c_str(), "w");
    std::fputs("not hdf5\n", f);
    std::fclose(f);
  }
  in.file = dir / "text.h5";
  try {
    open_hdf5_input(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::input_missing);
    EXPECT_NE(std::string(e.what()).find("not an HDF5 file"), std::string::npos);
  }
  GenerateOptions g;
  g.dates = 2;
  g.ids = 3;
  g.nums = 4;
  g.out = dir / "ok.h5";
  generate_command(g);
  in.file = g.out;
  in.discount = "nope";
  try {
    open_hdf5_input(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::input_missing);
    EXPECT_NE(std::string(e.what()).find("'nope' not found"), std::string::npos);
  }
  in.discount = "multBy";  // rank 2 where 3 is needed
  try {
    open_hdf5_input(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::data_invalid);
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos);
  }
}
