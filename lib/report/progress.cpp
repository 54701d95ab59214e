#include "report/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

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
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n > 0 && n < 100000) return static_cast<int>(n);
  }
  return 80;
}

}  // namespace discount
