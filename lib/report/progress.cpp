#include "report/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "common/knobs.hpp"

namespace discount {

namespace {

std::string format(const char* fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

}  // namespace

std::string progress_line(const ProgressFields& f, int width) {
  const std::string count = std::to_string(f.written) + "/" + std::to_string(f.total);
  const std::string percent = " (" + format("%.0f", f.total > 0 ? 100.0 * f.written / f.total : 0.0) + "%)";
  const std::string out = ", " + format("%.2f", f.gb_out) + " GB out";
  const std::string rate = ", " + format("%.2f", f.gb_per_s) + " GB/s";
  const std::string eta = "ETA " + format("%.0f", f.eta_seconds) + " s";
  const std::string tag = "[discount_app] ";
  // From the whole line to the bare count, each variant one field shorter.
  const std::vector<std::string> variants = {
      tag + f.rank_label + count + " slabs written" + percent + out + rate + ", " + eta,
      tag + f.rank_label + count + " slabs written" + percent + rate + ", " + eta,
      tag + f.rank_label + count + " slabs written" + percent + ", " + eta,
      f.rank_label + count + " slabs written" + percent + ", " + eta,
      f.rank_label + count + " slabs" + percent + ", " + eta,
      f.rank_label + count + " slabs, " + eta,
      f.rank_label + count + " slabs",
      count + " slabs",
      count,
  };
  if (width <= 0) return variants.front();
  const auto room = static_cast<std::size_t>(width - 1);
  for (const auto& v : variants)
    if (v.size() <= room) return v;
  return count.substr(0, room);
}

std::string status_prefix(bool terminal, std::time_t now) {
  return terminal ? "[discount_app] " : utc_timestamp(now) + " [discount_app] ";
}

std::string status_prefix() { return status_prefix(stdout_is_terminal(), std::time(nullptr)); }

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) != 0; }

int terminal_columns(int fd) {
  struct winsize size {};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = environment_value("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n > 0 && n < 100000) return static_cast<int>(n);
  }
  return 80;
}

ProgressPrinter::ProgressPrinter(std::string rank_label)
    : rank_label_(std::move(rank_label)), tty_(stdout_is_terminal()) {}

void ProgressPrinter::slab_written(int written, int total, std::uint64_t bytes, double seconds) {
  const bool last = written == total;
  if (!last && seconds - last_print_ < (tty_ ? 0.5 : 5.0)) return;
  last_print_ = seconds;
  print(progress_fields(rank_label_, written, total, bytes, seconds), last);
}

ProgressFields progress_fields(std::string rank_label, int written, int total, std::uint64_t bytes, double seconds) {
  return {std::move(rank_label),
          written,
          total,
          bytes / 1e9,
          seconds > 0 ? bytes / seconds / 1e9 : 0.0,
          written > 0 ? seconds / written * (total - written) : 0.0};
}

// On a terminal: "\r", the line fitted to the width read now (the window
// may have been resized), then erase to the end of the line, so nothing of
// a longer earlier line remains. In a log: one whole line per call, time-stamped.
void ProgressPrinter::print(const ProgressFields& fields, bool last) {
  if (tty_) {
    const std::string text = progress_line(fields, terminal_columns(STDOUT_FILENO));
    std::fprintf(stdout, "\r%s\x1b[K%s", text.c_str(), last ? "\n" : "");
    line_open_ = !last;
  } else {
    std::fprintf(stdout, "%s %s\n", utc_timestamp(std::time(nullptr)).c_str(), progress_line(fields, 0).c_str());
  }
  std::fflush(stdout);
}

void ProgressPrinter::finish() {
  if (!line_open_) return;
  std::fputs("\n", stdout);
  std::fflush(stdout);
  line_open_ = false;
}

}  // namespace discount
