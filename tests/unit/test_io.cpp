// HDF5 round trips and the output protocol, against plain HDF5 reads.
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
#include "io/hdf5_handle.hpp"
#include "io/input.hpp"
#include "io/memory_arrays.hpp"
#include "io/output.hpp"
#include "io/output_parts.hpp"
#include "io/posix_io.hpp"
#include "io/synthetic.hpp"
#include "commands/tools.hpp"

#include "temp_dir.hpp"

using namespace discount;
namespace fs = std::filesystem;
using TempDir = discount::test_support::TempDir;

namespace {

std::vector<double> read_all(const std::string& file, const std::string& name) {
  h5::Id f = h5::file(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id d = h5::dataset(H5Dopen2(f.get(), name.c_str(), H5P_DEFAULT));
  std::size_t n = 1;
  for (auto e : h5::dataset_dims(d.get())) n *= e;
  std::vector<double> values(n);
  EXPECT_GE(H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  return values;
}

OutputSpec spec_for(const std::string& path, std::int64_t dates, std::int64_t ids, std::int64_t nums) {
  OutputSpec spec;
  spec.path = path;
  spec.dates = dates;
  spec.ids = ids;
  spec.nums = nums;
  spec.fingerprint = "job-a";
  spec.provenance = "test";
  spec.checkpoint_seconds = 0;  // every slab durable and recorded at once
  return spec;
}

Slab slab_of(std::int64_t d0, std::int64_t d1, std::int64_t ids, std::int64_t nums, int index) {
  Slab s;
  s.index = index;
  s.dates = {d0, d1};
  s.ids = {0, ids};
  s.nums = nums;
  return s;
}

}  // namespace

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
    auto source = open_input(in);
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
    open_input(in);
    FAIL();
  } catch (const Error& e) { EXPECT_EQ(e.code(), ExitCode::input_missing); }
  {
    FILE* f = std::fopen((dir / "text.h5").c_str(), "w");
    std::fputs("not hdf5\n", f);
    std::fclose(f);
  }
  in.file = dir / "text.h5";
  try {
    open_input(in);
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
    open_input(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::input_missing);
    EXPECT_NE(std::string(e.what()).find("'nope' not found"), std::string::npos);
  }
  in.discount = "multBy";  // rank 2 where 3 is needed
  try {
    open_input(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::data_invalid);
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos);
  }
}

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

// Runs at an unaligned base: single elements, runs inside one 4 KiB block,
// runs crossing many blocks and more than one 4 MiB staging piece. Every byte
// of every run must land, and every byte between runs must stay as it was.
static void check_direct_writes(const std::string& path, bool expect_direct) {
  const std::uint64_t base = 1234, file_bytes = std::uint64_t{12} << 20;
  const std::vector<Run> runs{{0, 1}, {5, 1000}, {2000, 600000}, {700000, 512}, {800000, 3}, {900000, 510}};
  std::size_t total = 0;
  for (const auto& r : runs) total += static_cast<std::size_t>(r.length);
  std::vector<double> packed(total);
  for (std::size_t e = 0; e < total; ++e) packed[e] = 1.0 + 1e-7 * static_cast<double>(e * 7919 % 1000003);
  {
    std::vector<char> poison(file_bytes, char(0xAB));
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, poison.data(), poison.size(), 0), static_cast<ssize_t>(poison.size()));
    DirectWriter writer(path, DirectWriter::kMaxPiece);
    if (expect_direct) { EXPECT_TRUE(writer.active()) << path << ": this file system should take O_DIRECT"; }
    writer.write_runs(fd, base, runs, packed.data(), sizeof(double), "test");
    if (expect_direct) { EXPECT_TRUE(writer.active()) << "fell back to the page cache"; }
    ASSERT_EQ(::fdatasync(fd), 0);
    ::close(fd);
  }
  std::vector<char> file(file_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_EQ(::pread(fd, file.data(), file.size(), 0), static_cast<ssize_t>(file.size()));
  ::close(fd);
  std::vector<char> expected(file_bytes, char(0xAB));
  std::size_t at = 0;
  for (const auto& r : runs) {
    std::memcpy(expected.data() + base + static_cast<std::size_t>(r.offset) * 8, packed.data() + at,
                static_cast<std::size_t>(r.length) * 8);
    at += static_cast<std::size_t>(r.length);
  }
  std::size_t bad = 0;
  for (std::size_t b = 0; b < file_bytes; ++b) bad += file[b] != expected[b];
  EXPECT_EQ(bad, 0u) << path;
}

TEST(Io, DirectWriterWritesEveryRunAndNothingElse) {
  TempDir dir;
  struct statfs fs_info {};
  ASSERT_EQ(::statfs("/tmp", &fs_info), 0);
  // ext4 and XFS take O_DIRECT; elsewhere the content must still be right.
  const bool direct = fs_info.f_type == 0xEF53 || fs_info.f_type == 0x58465342;
  check_direct_writes(dir / "direct.bin", direct);
}

TEST(Io, DirectWriterStagingFitsAnEighthOfTheBudget) {
  EXPECT_EQ(DirectWriter::piece_for(std::uint64_t{64} << 20, 2), DirectWriter::kMaxPiece);
  EXPECT_EQ(DirectWriter::piece_for(std::uint64_t{1} << 30, 8), DirectWriter::kMaxPiece);
  EXPECT_EQ(DirectWriter::piece_for(std::uint64_t{16} << 20, 8), std::uint64_t{256} << 10);
  EXPECT_EQ(DirectWriter::piece_for(605398, 2), 36864u);  // 591 KiB: 36 KiB each, 4 KiB-aligned
  EXPECT_EQ(DirectWriter::piece_for(1024, 2), DirectWriter::kAlign);
  EXPECT_EQ(DirectWriter::piece_for(1024, 0), DirectWriter::kAlign);
}

TEST(Io, DirectWriterOnTmpfs) {
  // tmpfs takes O_DIRECT since Linux 6.6 but still copies into its page
  // cache: the writer skips O_DIRECT there (no bounce-buffer copy) and
  // every byte must land.
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  char pattern[] = "/dev/shm/discount_test_direct_XXXXXX";
  const int fd = ::mkstemp(pattern);
  ASSERT_GE(fd, 0);
  ::close(fd);
  if (!memory_backed(pattern)) GTEST_SKIP() << "/dev/shm is not tmpfs here";
  {
    DirectWriter writer(pattern, DirectWriter::kMaxPiece);
    EXPECT_TRUE(writer.memory_backed());
    EXPECT_FALSE(writer.active());
  }
  check_direct_writes(pattern, false);
  ::unlink(pattern);
}

TEST(Io, FullTmpfsMidWriteIsAnErrorNotACrash) {
  // The tmpfs writer stores through a shared mapping; a plain store into a
  // page the file system cannot give would kill the process with SIGBUS.
  // A 1 MiB tmpfs, a sparse 8 MiB file, 4 MiB written: a clean io_error.
  TempDir dir;
  const std::string mount_point = dir / "small";
  fs::create_directory(mount_point);
  if (::geteuid() != 0 || std::system(("mount -t tmpfs -o size=1m tmpfs " + mount_point + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs (needs root)";
  const std::string path = mount_point + "/out.bin";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8 << 20), 0);
  const std::vector<double> values(std::size_t{4} << 17, 1.5);  // 4 MiB
  {
    DirectWriter writer(path, DirectWriter::kMaxPiece);
    EXPECT_TRUE(writer.memory_backed());
    try {
      writer.write_runs(fd, 0, {{0, static_cast<std::int64_t>(values.size())}}, values.data(), sizeof(double),
                        "writing the test file");
      ADD_FAILURE() << "4 MiB fitted into a 1 MiB tmpfs";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::io_error);
      EXPECT_NE(std::string(e.what()).find("no space left on device"), std::string::npos) << e.what();
    }
  }
  ::close(fd);
  std::system(("umount " + mount_point).c_str());
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

TEST(OutputParts, AutoCountBoundsAndTheirText) {
  const std::uint64_t MiB = std::uint64_t{1} << 20, GiB = std::uint64_t{1} << 30;
  for (bool memory : {true, false}) {
    EXPECT_EQ(auto_parts(255 * MiB, 16, memory), 1);     // small outputs stay in one part
    EXPECT_EQ(auto_parts(256 * MiB, 16, memory), 2);     // at least 2 once big enough
    EXPECT_EQ(auto_parts(4000 * GiB, 256, memory), 64);  // 64 in all
    EXPECT_EQ(auto_parts(1 * GiB, 1, memory), 2);
  }
  EXPECT_EQ(auto_parts(200 * GiB, 16, true), 16);   // memory-backed: at most one per core
  EXPECT_EQ(auto_parts(200 * GiB, 16, false), 32);  // a disk: two per core
  // Memory-backed: one per 2 GiB.
  EXPECT_EQ(auto_parts(20 * GiB, 16, true), 10);
  EXPECT_EQ(auto_parts(20 * GiB + 1, 16, true), 11);
  // A disk: two per core, each at least 256 MiB.
  EXPECT_EQ(auto_parts(10 * GiB, 16, false), 32);
  EXPECT_EQ(auto_parts(8 * GiB - 1, 16, false), 31);
  EXPECT_EQ(auto_parts(1 * GiB, 16, false), 4);
  EXPECT_EQ(auto_parts(1 * GiB - 1, 16, false), 3);
  EXPECT_EQ(auto_parts(4 * GiB, 4, false), 8);
  EXPECT_EQ(auto_parts(4 * GiB, 3, false), 6);
  std::vector<Range> slabs;
  for (std::int64_t d = 0; d < 13; ++d) slabs.push_back({d, d + 1});
  EXPECT_EQ(part_bounds(slabs, 13, 4), (std::vector<std::int64_t>{0, 3, 6, 9, 13}));
  EXPECT_EQ(part_bounds(slabs, 13, 40).size(), 14u);  // cut to the slabs
  EXPECT_EQ(part_bounds(slabs, 13, 1), (std::vector<std::int64_t>{0, 13}));
  // Uneven slabs: parts end at slab edges.
  EXPECT_EQ(part_bounds({{0, 5}, {5, 10}, {10, 11}}, 11, 2), (std::vector<std::int64_t>{0, 5, 11}));
  EXPECT_EQ(parse_bounds(bounds_text({0, 3, 6, 13}), 13), (std::vector<std::int64_t>{0, 3, 6, 13}));
  EXPECT_TRUE(parse_bounds("0,3,6,12", 13).empty());  // must end at the unit count
  EXPECT_TRUE(parse_bounds("0,6,3,13", 13).empty());  // increasing
  EXPECT_TRUE(parse_bounds("0,x,13", 13).empty());
  EXPECT_TRUE(parse_bounds("", 13).empty());
  EXPECT_TRUE(is_parts_folder_of("out.h5.parts-1a", "out.h5"));
  EXPECT_FALSE(is_parts_folder_of("out.h5.parts-", "out.h5"));
  EXPECT_FALSE(is_parts_folder_of("xout.h5.parts-1a", "out.h5"));
}

// Split layout with the chunk axis inside ([id][date][num]): slabs inside one
// part and a slab across a part's edge (a resume whose plan cut slabs
// differently) land where the virtual dataset reads them.
TEST(Output, SplitLayoutWritesEverySlabWhereTheVirtualDatasetReadsIt) {
  TempDir dir;
  const std::string out = dir / "cv.h5";
  const std::int64_t dates = 5, ids = 3, nums = 2;
  OutputSpec spec = spec_for(out, dates, ids, nums);
  spec.axes = {Axis::id, Axis::date, Axis::num};
  spec.layout = OutputLayout::split;
  spec.parts = 2;
  spec.slabs = 5;
  for (std::int64_t d = 0; d < dates; ++d) spec.slab_units.push_back({d, d + 1});
  spec.identity = "identity: test";
  std::vector<double> full(static_cast<std::size_t>(ids * dates * nums));  // file order [id][date][num]
  for (std::size_t e = 0; e < full.size(); ++e) full[e] = -3.5 + 0.25 * static_cast<double>(e + 1);
  const auto packed = [&](std::int64_t d0, std::int64_t d1) {
    std::vector<double> slab;
    for (std::int64_t i = 0; i < ids; ++i)
      for (std::int64_t d = d0; d < d1; ++d)
        for (std::int64_t k = 0; k < nums; ++k)
          slab.push_back(full[static_cast<std::size_t>((i * dates + d) * nums + k)]);
    return slab;
  };
  std::string folder;
  {
    FileOutput sink(spec);
    EXPECT_EQ(sink.writer_threads(), 2);
    folder = sink.parts_folder();
    ASSERT_FALSE(folder.empty());
    EXPECT_TRUE(fs::exists(folder + "/part-00000.h5"));
    EXPECT_TRUE(fs::exists(folder + "/part-00001.h5"));
    // write_order interleaves the parts (bounds 0, 2, 5).
    EXPECT_EQ(sink.write_order({0, 1, 2, 3, 4}), (std::vector<int>{0, 2, 1, 3, 4}));
    auto a = packed(0, 1), b = packed(1, 4), c = packed(4, 5);
    sink.write_slab(slab_of(0, 1, ids, nums, 0), a.data());
    sink.write_slab(slab_of(1, 4, ids, nums, 1), b.data());  // across the edge at date 2
    sink.write_slab(slab_of(4, 5, ids, nums, 2), c.data());
    sink.publish();
  }
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_TRUE(fs::exists(folder));
  EXPECT_EQ(read_all(out, "cv"), full);
}

// Arrays in memory hand each piece to the visitor right after copying it
// (compute.kernel: fused multiplies it there): every element exactly once,
// already in the buffer when visited, for float64 and strided float32 views
// large enough to be copied on several threads.
TEST(MemoryInput, VisitsEachPieceOnceRightAfterItsCopy) {
  const std::int64_t dates = 3, ids = 350003, nums = 2;  // 2.1 M elements: threaded copies
  std::vector<double> mult(static_cast<std::size_t>(ids * nums), 1.5);
  std::vector<double> disc64(static_cast<std::size_t>(dates * ids * nums));
  std::vector<float> disc32(disc64.size() * 2);  // every other float: a strided view
  for (std::size_t e = 0; e < disc64.size(); ++e) {
    disc64[e] = 1.0 + static_cast<double>(e % 1009) / 7.0;
    disc32[2 * e] = static_cast<float>(disc64[e]);
  }
  for (bool f32 : {false, true}) {
    ArrayRef m{mult.data(), ElementType::f64, 2, {ids, nums, 0}, {nums, 1, 0}, "mult"};
    ArrayRef d{f32 ? static_cast<void*>(disc32.data()) : static_cast<void*>(disc64.data()),
               f32 ? ElementType::f32 : ElementType::f64,
               3,
               {dates, ids, nums},
               f32 ? std::array<std::int64_t, 3>{2 * ids * nums, 2 * nums, 2}
                   : std::array<std::int64_t, 3>{ids * nums, nums, 1},
               "disc"};
    MemoryInput input(m, d, {Axis::date, Axis::id, Axis::num});
    ASSERT_TRUE(input.visits_as_read());
    const Range date_range{1, 3}, id_range{17, ids - 5};
    const std::int64_t n = date_range.size() * id_range.size() * nums;
    std::vector<double> buffer(static_cast<std::size_t>(n), std::nan(""));
    std::mutex mutex;
    std::vector<std::pair<std::int64_t, std::int64_t>> pieces;
    bool all_there = true;
    input.read_discount_visited(date_range, id_range, buffer.data(), [&](std::int64_t first, std::int64_t count) {
      bool there = true;
      for (std::int64_t e = first; e < first + count; ++e) {
        const std::int64_t row = e / nums, k = e % nums;
        const std::int64_t date = date_range.begin + row / id_range.size(), id = id_range.begin + row % id_range.size();
        there =
            there && buffer[static_cast<std::size_t>(e)] ==
                         static_cast<double>(f32 ? disc32[static_cast<std::size_t>(2 * ((date * ids + id) * nums + k))]
                                                 : disc64[static_cast<std::size_t>((date * ids + id) * nums + k)]);
      }
      std::lock_guard<std::mutex> lock(mutex);
      all_there = all_there && there;
      pieces.emplace_back(first, count);
    });
    EXPECT_TRUE(all_there) << (f32 ? "float32" : "float64") << ": a piece was visited before its copy";
    std::sort(pieces.begin(), pieces.end());
    std::int64_t covered = 0;
    for (const auto& [first, count] : pieces) {
      ASSERT_EQ(first, covered) << "pieces overlap or leave a gap";
      EXPECT_LE(count * 8, static_cast<std::int64_t>(2 * kCachePieceBytes));
      covered += count;
    }
    EXPECT_EQ(covered, n);
    EXPECT_GT(pieces.size(), 3u);
  }
}

// copy_box moves rows that lie next to each other in one copy: whole
// planes, rows within a plane, or row by row when a box cuts the last axis.
// Each box, both ways, against a plain loop, on an array large enough for
// threaded copies; the elements outside the box stay untouched.
// Where a GPU may copy a piece straight from or into an array pinned in
// place: one contiguous float64 run, and only then.
TEST(MemoryInput, PinnedRunIsWhereAContiguousPieceLies) {
  const std::int64_t dates = 3, ids = 7, nums = 5;
  std::vector<double> array(static_cast<std::size_t>(dates * ids * nums));
  ArrayRef a{array.data(), ElementType::f64, 3, {dates, ids, nums}, {ids * nums, nums, 1}, "disc"};
  const std::array<std::int64_t, 3> whole{dates, ids, nums};
  EXPECT_EQ(pinned_run(a, {0, 0, 0}, whole, 3, 40), nullptr) << "not pinned";
  a.pinned = true;
  EXPECT_EQ(pinned_run(a, {0, 0, 0}, whole, 3, 40), array.data() + 3) << "whole array: any range";
  EXPECT_EQ(pinned_run(a, {1, 0, 0}, {2, ids, nums}, 30, 50), array.data() + ids * nums + 30) << "whole planes";
  // Rows 2..5 of each plane: a range inside one plane's rows is one run, one
  // that crosses into the next plane is not.
  EXPECT_EQ(pinned_run(a, {0, 2, 0}, {dates, 4, nums}, 1, 19), array.data() + 2 * nums + 1);
  EXPECT_EQ(pinned_run(a, {0, 2, 0}, {dates, 4, nums}, 1, 20), nullptr) << "crosses a plane's edge";
  // Part of each row: only a range inside one row.
  EXPECT_EQ(pinned_run(a, {0, 0, 1}, {dates, ids, 3}, 3, 3), array.data() + nums + 1);
  EXPECT_EQ(pinned_run(a, {0, 0, 1}, {dates, ids, 3}, 2, 2), nullptr) << "crosses a row's edge";
  ArrayRef strided = a;
  strided.shape = {dates, ids, 2};
  strided.strides = {ids * nums, nums, 2};
  EXPECT_EQ(pinned_run(strided, {0, 0, 0}, {dates, ids, 2}, 0, 2), nullptr) << "elements 2 apart";
  EXPECT_EQ(pinned_run(strided, {0, 0, 0}, {dates, ids, 2}, 1, 1), array.data() + 2) << "one element";
  ArrayRef single = a;
  single.type = ElementType::f32;
  EXPECT_EQ(pinned_run(single, {0, 0, 0}, whole, 0, 10), nullptr) << "float32 is widened, never copied as is";
}

TEST(MemoryInput, CopyBoxMatchesAPlainLoopForEveryContiguity) {
  const std::int64_t dates = 4, ids = 300007, nums = 3;
  std::vector<double> array(static_cast<std::size_t>(dates * ids * nums));
  for (std::size_t e = 0; e < array.size(); ++e) array[e] = 1.0 + static_cast<double>(e % 4099) / 3.0;
  ArrayRef a{array.data(), ElementType::f64, 3, {dates, ids, nums}, {ids * nums, nums, 1}, "disc"};
  struct Box {
    std::array<std::int64_t, 3> start, count;
    const char* what;
  };
  for (const Box& box :
       {Box{{0, 0, 0}, {dates, ids, nums}, "whole array: one run"}, Box{{1, 0, 0}, {2, ids, nums}, "whole planes"},
        Box{{0, 5, 0}, {3, ids - 9, nums}, "rows within each plane"},
        Box{{1, 2, 1}, {3, ids - 4, 2}, "part of each row"}}) {
    const std::int64_t n = box.count[0] * box.count[1] * box.count[2];
    std::vector<double> packed(static_cast<std::size_t>(n), std::nan(""));
    copy_box(a, box.start, box.count, packed.data(), false);
    std::int64_t wrong = 0, e = 0;
    for (std::int64_t x = 0; x < box.count[0]; ++x)
      for (std::int64_t y = 0; y < box.count[1]; ++y)
        for (std::int64_t z = 0; z < box.count[2]; ++z, ++e)
          wrong +=
              packed[static_cast<std::size_t>(e)] !=
              array[static_cast<std::size_t>(((box.start[0] + x) * ids + box.start[1] + y) * nums + box.start[2] + z)];
    EXPECT_EQ(wrong, 0) << box.what << ": read";
    // Ranges of the packed box at odd edges (mid-row, mid-plane), read and
    // written back by copy_box_range, as memory.staging: none's pieces are.
    {
      std::vector<double> ranged(static_cast<std::size_t>(n), std::nan(""));
      for (std::int64_t first = 0, step = 1; first < n; first += step, step = step * 3 + 7)
        copy_box_range(a, box.start, box.count, first, std::min(step, n - first), ranged.data() + first, false);
      EXPECT_EQ(ranged, packed) << box.what << ": read by ranges";
      std::vector<double> back(array.size(), -7.0);
      ArrayRef b = a;
      b.data = back.data();
      for (std::int64_t first = 0, step = 5; first < n; first += step, step = step * 2 + 3)
        copy_box_range(b, box.start, box.count, first, std::min(step, n - first), ranged.data() + first, true);
      std::vector<double> whole(array.size(), -7.0);
      ArrayRef c = a;
      c.data = whole.data();
      copy_box(c, box.start, box.count, packed.data(), true);
      EXPECT_EQ(back, whole) << box.what << ": written by ranges";
    }
    std::vector<double> out(array.size(), -7.0);
    ArrayRef o = a;
    o.data = out.data();
    for (auto& v : packed) v = -v;
    copy_box(o, box.start, box.count, packed.data(), true);
    wrong = 0;
    std::int64_t outside = 0;
    for (std::int64_t x = 0; x < dates; ++x)
      for (std::int64_t y = 0; y < ids; ++y)
        for (std::int64_t z = 0; z < nums; ++z) {
          const double got = out[static_cast<std::size_t>((x * ids + y) * nums + z)];
          const bool inside = x >= box.start[0] && x < box.start[0] + box.count[0] && y >= box.start[1] &&
                              y < box.start[1] + box.count[1] && z >= box.start[2] && z < box.start[2] + box.count[2];
          if (inside)
            wrong += got != -array[static_cast<std::size_t>((x * ids + y) * nums + z)];
          else
            outside += got != -7.0;
        }
    EXPECT_EQ(wrong, 0) << box.what << ": write";
    EXPECT_EQ(outside, 0) << box.what << ": wrote outside the box";
  }
}
