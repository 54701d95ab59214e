// Where a run's start-up goes: the time from the process's exec to its first
// read of input data, cut into named phases (loading and parsing, opening
// the input, the output, Kokkos, the link limits, the staging buffers). The
// run report prints it as its own line, so a batch user sees what each job
// pays before any data moves.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace discount::startup {

// Ends the phase running now and names it. Phases are kept in call order;
// marks after the first read are ignored (start-up is over).
void mark(const std::string& phase);
// Start-up ends: the first read of input data begins now. Only the first
// call counts; any thread may make it.
void first_read();

struct Phase {
  std::string name;
  double seconds = 0;
};
struct Breakdown {
  double total_seconds = 0;  // exec to the first read; 0 if no read began
  std::vector<Phase> phases;
  // "0.84 s from exec to the first input read: exec to main 0.05, input 0.02, ..."
  std::string describe() const;
};
Breakdown breakdown();

// Seconds since this process was exec'd (from /proc/self/stat, 10 ms
// resolution; since the first call where that is not available).
double seconds_since_exec();

}  // namespace discount::startup
