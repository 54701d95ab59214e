// The progress line fitted to a terminal's width, and the time stamps of a log.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "report/progress.hpp"

using namespace discount;

namespace {

ProgressFields midway() {
  ProgressFields f;
  f.written = 123;
  f.total = 400;
  f.gb_out = 1.5;
  f.gb_per_s = 0.75;
  f.eta_seconds = 9.4;
  return f;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(ProgressLine, WholeLineWithoutAWidth) {
  EXPECT_EQ(progress_line(midway(), 0), "[discount_app] 123/400 slabs written (31%), 1.50 GB out, 0.75 GB/s, ETA 9 s");
  ProgressFields f = midway();
  f.rank_label = "rank 0 of 4: ";
  EXPECT_EQ(progress_line(f, -1),
            "[discount_app] rank 0 of 4: 123/400 slabs written (31%), 1.50 GB out, 0.75 GB/s, ETA 9 s");
}

TEST(ProgressLine, NeverReachesTheLastColumnAtAnyWidth) {
  for (const char* rank : {"", "rank 12 of 16: "}) {
    ProgressFields f = midway();
    f.rank_label = rank;
    for (int width = 1; width <= 200; ++width) {
      const std::string line = progress_line(f, width);
      EXPECT_LE(static_cast<int>(line.size()), width - 1) << "width " << width << ": " << line;
      EXPECT_EQ(line.find('\n'), std::string::npos);
      if (width > 10) { EXPECT_TRUE(contains(line, "123/400")) << "width " << width << ": " << line; }
    }
  }
}

TEST(ProgressLine, DropsWholeFieldsLeastImportantFirst) {
  const ProgressFields f = midway();
  const std::string whole = progress_line(f, 0);
  EXPECT_EQ(progress_line(f, static_cast<int>(whole.size()) + 1), whole);
  // One column less: the GB out goes first, the rest stays whole.
  EXPECT_EQ(progress_line(f, static_cast<int>(whole.size())),
            "[discount_app] 123/400 slabs written (31%), 0.75 GB/s, ETA 9 s");
  // 60 columns (the tmux test's terminal): then the GB/s.
  EXPECT_EQ(progress_line(f, 60), "[discount_app] 123/400 slabs written (31%), ETA 9 s");
  EXPECT_EQ(progress_line(f, 45), "123/400 slabs written (31%), ETA 9 s");
  EXPECT_EQ(progress_line(f, 30), "123/400 slabs (31%), ETA 9 s");
  EXPECT_EQ(progress_line(f, 24), "123/400 slabs, ETA 9 s");
  EXPECT_EQ(progress_line(f, 16), "123/400 slabs");
  EXPECT_EQ(progress_line(f, 8), "123/400");
  EXPECT_EQ(progress_line(f, 5), "123/");  // only below the bare count are characters cut
  EXPECT_EQ(progress_line(f, 1), "");
  // No variant ends inside a word or a number.
  for (int width = 9; width <= 90; ++width) {
    const std::string line = progress_line(f, width);
    const char last = line.back();
    EXPECT_TRUE(last == 's' || last == ')' || last == '0') << "width " << width << ": " << line;
  }
}

TEST(ProgressLine, RankLabelStaysUntilOnlyTheCountFits) {
  ProgressFields f = midway();
  f.rank_label = "rank 1 of 2: ";
  EXPECT_EQ(progress_line(f, 60), "rank 1 of 2: 123/400 slabs written (31%), ETA 9 s");
  EXPECT_EQ(progress_line(f, 28), "rank 1 of 2: 123/400 slabs");
  EXPECT_EQ(progress_line(f, 20), "123/400 slabs");
}

TEST(ProgressLine, LastLineAndEmptyJob) {
  ProgressFields f;
  f.written = f.total = 7;
  EXPECT_EQ(progress_line(f, 0), "[discount_app] 7/7 slabs written (100%), 0.00 GB out, 0.00 GB/s, ETA 0 s");
  ProgressFields none;
  EXPECT_TRUE(contains(progress_line(none, 0), "0/0 slabs written (0%)"));
}

TEST(StatusLines, LogLinesStartWithAnIsoUtcTime) {
  EXPECT_EQ(utc_timestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_timestamp(1796096467), "2026-12-01T03:41:07Z");
  EXPECT_EQ(status_prefix(false, 1796096467), "2026-12-01T03:41:07Z [discount_app] ");
  EXPECT_EQ(status_prefix(true, 1796096467), "[discount_app] ");
}

TEST(StatusLines, TerminalWidthFallsBackToColumnsThenEighty) {
  // A pipe is no terminal: $COLUMNS, then 80.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const char* saved = std::getenv("COLUMNS");
  const std::string keep = saved ? saved : "";
  ::setenv("COLUMNS", "61", 1);
  EXPECT_EQ(terminal_columns(fds[1]), 61);
  ::setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(terminal_columns(fds[1]), 80);
  ::unsetenv("COLUMNS");
  EXPECT_EQ(terminal_columns(fds[1]), 80);
  if (saved) ::setenv("COLUMNS", keep.c_str(), 1);
  ::close(fds[0]);
  ::close(fds[1]);
}

// What the run shows of the writer's figures (report/progress.hpp's
// ProgressPrinter): in a log, a line at most every 5 s of the writer's time
// (the seconds passed in, not the clock) and always the last slab's; nothing
// is left open for finish() to end.
TEST(ProgressPrinter, LogLinesEveryFiveSecondsAndTheLast) {
  testing::internal::CaptureStdout();  // stdout is a file now: log mode
  ProgressPrinter printer("rank 1 of 2: ");
  printer.slab_written(1, 10, 100'000'000, 1.0);     // too soon after the start
  printer.slab_written(2, 10, 200'000'000, 5.5);     // 5.5 s: shown
  printer.slab_written(3, 10, 300'000'000, 9.0);     // 3.5 s after the last line
  printer.slab_written(10, 10, 1'000'000'000, 9.5);  // the last slab: always shown
  printer.finish();
  const std::string out = testing::internal::GetCapturedStdout();
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(out.substr(at, end - at));
  ASSERT_EQ(lines.size(), 2u) << out;
  EXPECT_TRUE(contains(lines[0], "Z [discount_app] rank 1 of 2: 2/10 slabs written (20%)")) << lines[0];
  EXPECT_TRUE(contains(lines[0], "0.20 GB out")) << lines[0];
  EXPECT_TRUE(contains(lines[1], "rank 1 of 2: 10/10 slabs written (100%)")) << lines[1];
  EXPECT_TRUE(contains(lines[1], "ETA 0 s")) << lines[1];
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
}
