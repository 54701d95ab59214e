#include "probe/earlier_report.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "common/clock.hpp"
#include "probe/io_rates.hpp"

namespace discount {

namespace {

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : -1.0;
}

// Why the report is not this job's on this host, or "".
std::string other_job(const nlohmann::json& j, const ReportExpectation& expect) {
  if (text_of(j, "host") != expect.host)
    return "it is from host '" + text_of(j, "host") + "', this is '" + expect.host + "'";
  // schema_version 2 writes `input` as an object holding the line as `text`; 1 wrote the line.
  const auto input_it = j.find("input");
  const std::string input =
      input_it != j.end() && input_it->is_object() && input_it->contains("text") && (*input_it)["text"].is_string()
          ? (*input_it)["text"].get<std::string>()
          : text_of(j, "input");
  if (input != expect.input) return "its input differs (" + input + ")";
  const std::string output = text_of(j, "output");
  const std::string output_path = output.substr(0, output.find(" ("));
  const bool same_output = expect.output_is_file ? output.find(" (dataset '") != std::string::npos &&
                                                       folder_of(output_path) == folder_of(expect.output_path)
                                                 : output == expect.output_path;
  if (!same_output) return "its output (" + output + ") is not in this job's output folder";
  return {};
}

}  // namespace

EarlierReport earlier_report_from_json(const std::string& json_text, const ReportExpectation& expect) {
  EarlierReport report;
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    report.why_not = "it is not a JSON report";
    return report;
  }
  report.why_not = other_job(j, expect);
  if (!report.why_not.empty()) return report;
  const bool same_kernel = text_of(j, "space") == expect.space && text_of(j, "kernel") == expect.kernel &&
                           text_of(j, "slicing") == expect.slicing;
  const auto stages = j.find("stages");
  if (stages == j.end() || !stages->is_array()) {
    report.why_not = "it has no stages";
    return report;
  }
  for (const auto& stage : *stages) {
    if (!stage.is_object() || !stage.contains("name") || !stage["name"].is_string()) continue;
    Stage named = Stage::read;
    if (!stage_named(stage["name"].get<std::string>(), named)) continue;
    const double bytes = number_of(stage, "bytes"), seconds = number_of(stage, "seconds");
    if (bytes <= 0 || seconds <= 0) continue;
    if (named != Stage::read && named != Stage::write && !same_kernel) continue;
    link_of(report.rates, named) = {bytes / seconds / 1e9, LinkSource::earlier_report};
  }
  const auto slabs = j.find("slabs");
  const double skipped = slabs != j.end() && slabs->is_object() ? number_of(*slabs, "skipped_resumed") : -1.0;
  const double wall = number_of(j, "wall_seconds"), busy = number_of(j, "any_stage_seconds");
  if (text_of(j, "outcome") == "complete" && skipped == 0 && wall > 0 && busy > 0 && wall >= busy)
    report.outside_stages = wall - busy;
  report.usable = report.rates.read.known() || report.rates.write.known() || report.rates.kernel.known();
  if (!report.usable) report.why_not = "it measured no stage";
  return report;
}

std::string file_date_text(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "unknown date";
  const std::time_t when = st.st_mtim.tv_sec;
  const std::string date = utc_minutes(when);
  const double age = std::difftime(std::time(nullptr), when);
  char ago[40];
  if (age < 120)
    std::snprintf(ago, sizeof ago, "%.0f s ago", std::max(0.0, age));
  else if (age < 7200)
    std::snprintf(ago, sizeof ago, "%.0f min ago", age / 60);
  else if (age < 172800)
    std::snprintf(ago, sizeof ago, "%.0f h ago", age / 3600);
  else
    std::snprintf(ago, sizeof ago, "%.0f days ago", age / 86400);
  return std::string(date) + " (" + ago + ")";
}

EarlierReport read_earlier_report(const std::string& path, const ReportExpectation& expect) {
  EarlierReport report;
  std::ifstream in(path);
  if (path.empty() || !in) {
    report.why_not = path.empty() ? "no report: key" : "no report at " + path;
    return report;
  }
  std::stringstream text;
  text << in.rdbuf();
  report = earlier_report_from_json(text.str(), expect);
  const std::string source = "report " + path + " of " + file_date_text(path);
  for (Stage stage : kAllStages)
    if (report.rates.of(stage).known()) link_of(report.rates, stage).note = source;
  return report;
}

}  // namespace discount
