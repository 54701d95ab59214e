// Rates from an earlier run of the same job: its JSON report (`report:`),
// when it ran on this host, from the same input, into the same folder. plan
// takes the stage rates it lacks from it, and its time in no stage.
#pragma once

#include <string>

#include "plan/limits.hpp"

namespace discount {

// What must match for an earlier report to stand for this job.
struct ReportExpectation {
  std::string host;   // host_name()
  std::string input;  // InputSource::describe(): the same file, datasets, types and read path
  // The report's output (RunReport::output) must be in the same folder as
  // this path (output.mode: file), or be this sink's describe() text.
  std::string output_path;
  bool output_is_file = true;
  std::string space;  // execution_space_name(): kernel, h2d and d2h need the same
  std::string kernel, slicing;
};

struct EarlierReport {
  bool usable = false;
  std::string why_not;  // when not usable: one phrase
  // Stage rates of the run (bytes over busy seconds): read and write; h2d,
  // kernel and d2h only when space, kernel and slicing match. Their source is
  // earlier_report; read_earlier_report adds the note naming the file.
  Limits rates;
  // Wall seconds in no stage (a complete run that did every slab); < 0 unknown.
  double outside_stages = -1;
};
// Pure: the JSON text of a report (report/report.cpp's to_json) against `expect`.
EarlierReport earlier_report_from_json(const std::string& json_text, const ReportExpectation& expect);
// The report file at `path`: absent, unreadable or another job's gives
// usable false. Its rates' note reads "report <path> of <UTC date> (<age>)".
EarlierReport read_earlier_report(const std::string& path, const ReportExpectation& expect);

// "2026-12-01 03:41 UTC (7 min ago)" for a file's modification time.
std::string file_date_text(const std::string& path);

}  // namespace discount
