// The progress line and the start of the run's status lines on stdout. On a
// terminal the progress line is redrawn in place, so it must fit the width
// (a line that wraps leaves fragments behind on every redraw); in a log
// (a file, a pipe, Slurm) every line is kept, so each starts with the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>

#include "common/clock.hpp"  // utc_timestamp, for status lines

namespace discount {

struct ProgressFields {
  std::string rank_label;  // "rank 0 of 4: " under MPI, else empty
  int written = 0, total = 0;
  double gb_out = 0.0, gb_per_s = 0.0, eta_seconds = 0.0;
};
// The figures after `written` of `total` slabs, `bytes` of them, `seconds`
// after the writer started: the rate so far, and the rest at that rate.
ProgressFields progress_fields(std::string rank_label, int written, int total, std::uint64_t bytes, double seconds);

// The progress line, without "\r" or a newline. width > 0: at most width - 1
// columns (the last column stays free: some terminals wrap on it), dropping
// whole fields, least important first: GB out, GB/s, the "[discount_app] "
// tag, the word "written", the percentage, the ETA, the rank; only a width
// below "W/T" cuts characters. width <= 0: the whole line. Pure.
std::string progress_line(const ProgressFields& fields, int width);

// What starts a status line on stdout: "[discount_app] " on a terminal,
// "2026-12-01T03:41:07Z [discount_app] " otherwise (a log). Pure.
std::string status_prefix(bool terminal, std::time_t now);
// The same for this process's stdout, now.
std::string status_prefix();

bool stdout_is_terminal();

// Draws the run's progress on stdout from the writer's figures (the pipeline
// reports every slab written; this decides what to show and when). A
// terminal gets one line redrawn every half second, a log a time-stamped line
// every 5 s, and the last slab always shows. Used from the writer thread only.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::string rank_label);
  // `written` of `total` slabs are written, `bytes` of them, `seconds` after the writer started.
  void slab_written(int written, int total, std::uint64_t bytes, double seconds);
  // The writer is done, however the run ends: what is printed next (the
  // summary, an error, a warning) starts on a line of its own.
  void finish();

 private:
  void print(const ProgressFields& fields, bool last);
  std::string rank_label_;
  bool tty_;
  bool line_open_ = false;  // a progress line is drawn on the terminal without its end
  double last_print_ = 0.0;
};
// The width of the terminal on fd (ioctl TIOCGWINSZ), else $COLUMNS, else 80.
int terminal_columns(int fd);

}  // namespace discount
