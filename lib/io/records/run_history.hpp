// What an output file records about the runs that wrote it: one record per
// run (io/records/run_table.hpp) and, per done range of the chunk axis, the run that
// wrote it (io/records/unit_record.hpp). Plain types, read by io and joined into a
// job's runs by report/runs.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace discount {

// One run as the output file records it.
struct RunRecord {
  int run = 0;    // 1, 2, ... in the order the runs started; 0: not recorded (a file from an older version)
  int ranks = 0;  // processes that shared the run
  std::string start_time, end_time;  // UTC, ISO 8601; end: the run's last record
  std::string host;                  // rank 0's host name
  double seconds = 0.0;              // from start_time to end_time
};

// A done range as the output file records it: [begin, end) along the chunk axis.
struct RunRange {
  std::int64_t begin = 0, end = 0;
  int run = 0;  // the run that wrote it; 0: unknown
};

// What an output file holds about its runs.
struct RunHistory {
  std::vector<RunRecord> records;
  std::vector<RunRange> ranges;  // the valid done ranges; they may overlap (a slab recomputed whole)
  std::int64_t units = 0;        // along the chunk axis
  std::string unit_axis;         // "date" | "id"
};

}  // namespace discount
