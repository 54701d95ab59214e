#include "common/startup.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

namespace discount::startup {

namespace {

// Boot-clock seconds at which the kernel started this process: field 22 of
// /proc/self/stat, in clock ticks since boot. Negative when unknown.
double exec_boot_seconds() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces: count fields after its ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  for (int n = 3; n <= 22 && rest >> field; ++n)
    if (n == 22) {
      const long ticks = sysconf(_SC_CLK_TCK);
      return ticks > 0 ? std::stod(field) / static_cast<double>(ticks) : -1;
    }
  return -1;
}

double boot_now() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct State {
  std::mutex mutex;
  double origin = -1;  // boot-clock seconds of the exec
  double last = 0;     // seconds since exec at the last mark
  double end = 0;      // seconds since exec at the first read; 0 before it
  std::vector<Phase> phases;
};

State& state() {
  static State s;
  return s;
}

double since_origin(State& s) {
  if (s.origin < 0) {
    const double exec = exec_boot_seconds();
    s.origin = exec > 0 ? exec : boot_now();
  }
  return boot_now() - s.origin;
}

}  // namespace

double seconds_since_exec() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return since_origin(s);
}

void mark(const std::string& phase) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.end > 0) return;
  const double now = since_origin(s);
  s.phases.push_back({phase, now - s.last});
  s.last = now;
}

void first_read() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.end > 0) return;
  const double now = since_origin(s);
  if (now - s.last > 0.0005) s.phases.push_back({"other", now - s.last});
  s.end = now > 0 ? now : 1e-9;
}

Breakdown breakdown() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return {s.end, s.phases};
}

std::string Breakdown::describe() const {
  if (total_seconds <= 0) return "no input read began";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f s from exec to the first input read", total_seconds);
  std::string out = text;
  const char* sep = ": ";
  for (const auto& p : phases) {
    std::snprintf(text, sizeof text, "%s%s %.3f", sep, p.name.c_str(), p.seconds);
    out += text;
    sep = ", ";
  }
  return out;
}

}  // namespace discount::startup
