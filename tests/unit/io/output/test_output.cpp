// The output protocol (io/output/output.hpp): slabs, resume, locking, against plain HDF5 reads.
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

// chunk_axis: auto reads the axis an earlier run recorded: the partial's,
// else (overwrite off) the finished output's; none under --restart.
TEST(Output, RecordedChunkAxisOfPartialAndFinishedOutput) {
  TempDir dir;
  const std::string out = dir / "out.h5";
  EXPECT_FALSE(recorded_chunk_axis(out, false, false).has_value());
  OutputSpec spec = spec_for(out, 3, 4, 2);
  spec.chunk_axis = Axis::id;
  {
    FileOutput output(spec);  // creates out.h5.partial
  }
  auto recorded = recorded_chunk_axis(out, false, false);
  ASSERT_TRUE(recorded.has_value());
  EXPECT_EQ(recorded->axis, Axis::id);
  EXPECT_EQ(recorded->where, "the existing partial");
  EXPECT_TRUE(recorded_chunk_axis(out, true, false).has_value());   // a partial resumes whatever overwrite says
  EXPECT_FALSE(recorded_chunk_axis(out, false, true).has_value());  // --restart discards it
  fs::rename(out + ".partial", out);
  recorded = recorded_chunk_axis(out, false, false);
  ASSERT_TRUE(recorded.has_value());
  EXPECT_EQ(recorded->where, "the finished output");
  EXPECT_FALSE(recorded_chunk_axis(out, true, false).has_value());  // overwrite: replaced anyway
}

TEST(Output, WritesSlabsAndRenamesOnlyAtTheEnd) {
  TempDir dir;
  const std::string out = dir / "cv.h5";
  const std::int64_t dates = 4, ids = 7, nums = 3, row = ids * nums;
  std::vector<double> values(static_cast<std::size_t>(dates * row));
  for (std::size_t e = 0; e < values.size(); ++e) values[e] = 1.0 + 0.001 * static_cast<double>(e);
  {
    FileOutput sink(spec_for(out, dates, ids, nums));
    EXPECT_EQ(sink.state(), FileOutput::State::fresh);
    EXPECT_TRUE(fs::exists(out + ".partial"));
    EXPECT_FALSE(fs::exists(out));
    sink.write_slab(slab_of(0, 3, ids, nums, 0), values.data());
    EXPECT_FALSE(fs::exists(out));
    sink.write_slab(slab_of(3, 4, ids, nums, 1), values.data() + 3 * row);
    sink.publish();
  }
  EXPECT_TRUE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_EQ(read_all(out, "cv"), values);
}

TEST(Output, ResumesAfterACrashAndRefusesAnotherJob) {
  TempDir dir;
  const std::string out = dir / "cv.h5";
  const std::int64_t dates = 5, ids = 3, nums = 2, row = ids * nums;
  std::vector<double> values(static_cast<std::size_t>(dates * row));
  for (std::size_t e = 0; e < values.size(); ++e) values[e] = 2.0 + static_cast<double>(e);
  {
    FileOutput first(spec_for(out, dates, ids, nums));
    first.write_slab(slab_of(0, 2, ids, nums, 0), values.data());
    // No finish(): the process "dies" here.
  }
  {
    auto other = spec_for(out, dates, ids, nums);
    other.fingerprint = "job-b";
    try {
      FileOutput refused(other);
      FAIL() << "a partial of another job was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::cannot_create);
      EXPECT_NE(std::string(e.what()).find("--restart"), std::string::npos);
    }
  }
  {
    FileOutput resumed(spec_for(out, dates, ids, nums));
    EXPECT_EQ(resumed.state(), FileOutput::State::resumed);
    EXPECT_EQ(resumed.units_done(), 2);
    EXPECT_TRUE(resumed.slab_done(slab_of(0, 2, ids, nums, 0)));
    EXPECT_FALSE(resumed.slab_done(slab_of(1, 3, ids, nums, 1)));
    resumed.write_slab(slab_of(2, 5, ids, nums, 1), values.data() + 2 * row);
    resumed.publish();
  }
  EXPECT_EQ(read_all(out, "cv"), values);
  // Same job again: already complete, nothing to do.
  {
    FileOutput again(spec_for(out, dates, ids, nums));
    EXPECT_EQ(again.state(), FileOutput::State::already_complete);
  }
  // Another job onto an existing output without overwrite is refused.
  auto other = spec_for(out, dates, ids, nums);
  other.fingerprint = "job-c";
  EXPECT_THROW(FileOutput{other}, Error);
  other.overwrite = true;
  FileOutput replacing(other);
  EXPECT_EQ(replacing.state(), FileOutput::State::fresh);
}

TEST(Output, OneWriterPerOutput) {
  TempDir dir;
  const std::string out = dir / "cv.h5";
  const std::int64_t dates = 3, ids = 5, nums = 2;
  {
    FileOutput first(spec_for(out, dates, ids, nums));
    ASSERT_TRUE(fs::exists(out + ".partial.lock"));
    // flock() excludes a second open of the lock file, in this process too.
    try {
      FileOutput second(spec_for(out, dates, ids, nums));
      FAIL() << "a second writer of the same output was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::cannot_create);
      EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid()) + " on host "), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(fs::exists(out + ".partial"));
  }
  EXPECT_FALSE(fs::exists(out + ".partial.lock"));
  // A stale lock file (its holder killed) blocks nothing.
  { std::ofstream(out + ".partial.lock") << "pid 1 on host elsewhere\n"; }
  FileOutput resumed(spec_for(out, dates, ids, nums));
  EXPECT_EQ(resumed.state(), FileOutput::State::resumed);
}

TEST(Output, DatasetInsideGroups) {
  TempDir dir;
  const std::string out = dir / "cv.h5";
  const std::int64_t dates = 3, ids = 4, nums = 2, row = ids * nums;
  std::vector<double> values(static_cast<std::size_t>(dates * row));
  for (std::size_t e = 0; e < values.size(); ++e) values[e] = -3.5 + 0.25 * static_cast<double>(e);
  auto spec = spec_for(out, dates, ids, nums);
  spec.dataset = "results/run1/cv";
  {
    FileOutput sink(spec);
    sink.write_slab(slab_of(0, 1, ids, nums, 0), values.data());
  }
  {
    FileOutput resumed(spec);
    EXPECT_EQ(resumed.state(), FileOutput::State::resumed);
    EXPECT_EQ(resumed.units_done(), 1);
    resumed.write_slab(slab_of(1, 3, ids, nums, 1), values.data() + row);
    resumed.publish();
  }
  EXPECT_EQ(read_all(out, "results/run1/cv"), values);
  auto inside = spec_for(dir / "other.h5", dates, ids, nums);
  for (const char* name : {"discount_app/cv", "/discount_app", "discount_app"}) {
    inside.dataset = name;
    try {
      FileOutput refused(inside);
      FAIL() << name << " was accepted";
    } catch (const Error& e) { EXPECT_EQ(e.code(), ExitCode::config) << e.what(); }
  }
}

TEST(Output, ChecksumMatchesAPlainSum) {
  const std::int64_t dates = 3, ids = 4, nums = 2;
  std::vector<double> values(static_cast<std::size_t>(dates * ids * nums));
  for (std::size_t e = 0; e < values.size(); ++e) values[e] = 0.5 + 0.25 * static_cast<double>(e);
  // [id][date][num] layout, two id slabs.
  ChecksumOutput sink({Axis::id, Axis::date, Axis::num}, dates, ids, nums);
  auto slab = [&](std::int64_t i0, std::int64_t i1, int index) {
    Slab s;
    s.index = index;
    s.dates = {0, dates};
    s.ids = {i0, i1};
    s.nums = nums;
    return s;
  };
  sink.write_slab(slab(0, 1, 0), values.data());
  sink.write_slab(slab(1, 4, 1), values.data() + dates * nums);
  for (std::int64_t d = 0; d < dates; ++d) {
    double sum = 0;
    std::uint64_t bits = 0;
    for (std::int64_t i = 0; i < ids; ++i)
      for (std::int64_t k = 0; k < nums; ++k) {
        const double v = values[static_cast<std::size_t>((i * dates + d) * nums + k)];
        std::uint64_t b;
        std::memcpy(&b, &v, 8);
        sum += v;
        bits += b;
      }
    EXPECT_NEAR(sink.date_sums()[d], sum, 1e-12 * sum);
    EXPECT_EQ(sink.date_bits()[d], bits);
  }
}

TEST(Output, SlabsBetweenCheckpointsAreRedoneAfterACrash) {
  TempDir dir;
  const std::string out = dir / "cv.h5";
  const std::int64_t dates = 4, ids = 3, nums = 2, row = ids * nums;
  std::vector<double> values(static_cast<std::size_t>(dates * row), 1.5);
  auto spec = spec_for(out, dates, ids, nums);
  spec.checkpoint_seconds = 3600;
  {
    FileOutput sink(spec);
    sink.write_slab(slab_of(0, 1, ids, nums, 0), values.data());
    sink.checkpoint();  // slab 0 durable and recorded
    sink.write_slab(slab_of(1, 2, ids, nums, 1), values.data() + row);
    // dies before the next checkpoint: slab 1 is written but not vouched for
  }
  FileOutput resumed(spec);
  EXPECT_EQ(resumed.state(), FileOutput::State::resumed);
  EXPECT_EQ(resumed.units_done(), 1);
  EXPECT_TRUE(resumed.slab_done(slab_of(0, 1, ids, nums, 0)));
  EXPECT_FALSE(resumed.slab_done(slab_of(1, 2, ids, nums, 1)));
}
