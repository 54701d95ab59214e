#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

#include "common/error.hpp"
#include "common/sizes.hpp"
#include "config/config.hpp"
#include "config/config_json.hpp"
#include "report/report_job.hpp"
#include "io/posix/atomic_file.hpp"

namespace discount {

namespace {

double ratio(std::uint64_t a, std::uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }
// Bytes per thread-second: one thread's rate.
double thread_rate(std::uint64_t bytes, double busy_seconds) {
  return busy_seconds > 0 ? static_cast<double>(bytes) / busy_seconds : 0.0;
}

// The stage's rate over its wall time less the time it had nothing to
// encode (every encoder waiting for slabs) and its closing.
double encoding_rate(const CompressStats& z) {
  const double encoding = z.seconds - z.starved_seconds - z.closing_seconds;
  return encoding > 0 ? static_cast<double>(z.raw_bytes) / encoding : 0.0;
}

// output.compression's parts, and what its threads could encode at once:
// one thread's rate times the threads.
nlohmann::json compression_json(const CompressStats& z) {
  const double rate = thread_rate(z.raw_bytes, z.busy_seconds);
  return {{"codec", z.codec},
          {"raw_bytes", z.raw_bytes},
          {"stored_bytes", z.stored_bytes},
          {"ratio", ratio(z.raw_bytes, z.stored_bytes)},
          {"seconds", z.seconds},
          {"after_slabs_seconds", z.tail_seconds},
          {"busy_seconds", z.busy_seconds},
          {"writer_busy_seconds", z.writer_seconds},
          {"store_busy_seconds", z.store_seconds},
          {"slab_wait_seconds", z.slab_wait_seconds},
          {"queue_wait_seconds", z.queue_wait_seconds},
          {"starved_seconds", z.starved_seconds},
          {"closing_seconds", z.closing_seconds},
          {"encoding_rate_bytes_per_s", encoding_rate(z)},
          {"threads", z.threads},
          {"ranks", z.ranks},
          {"thread_rate_bytes_per_s", rate},
          {"limit_bytes_per_s", rate * z.threads}};
}

// The input's chunks decoded on the app's threads; the limit is what those
// threads decode when every one of them is busy decoding.
nlohmann::json decompression_json(const DecodeStats& d) {
  const double rate = thread_rate(d.raw_bytes, d.decode_busy_seconds);
  return {{"pipeline", d.pipeline},
          {"stored_bytes", d.stored_bytes},
          {"raw_bytes", d.raw_bytes},
          {"ratio", ratio(d.raw_bytes, d.stored_bytes)},
          {"chunks", d.chunks},
          {"busy_seconds", d.decode_busy_seconds},
          {"read_busy_seconds", d.read_busy_seconds},
          {"locate_busy_seconds", d.locate_busy_seconds},
          {"threads", d.threads},
          {"thread_rate_bytes_per_s", rate},
          {"limit_bytes_per_s", rate * d.threads}};
}

// "decompression  shuffle + deflate 4: 1.64 GB -> 2.10 GB, 3.10 s busy on 16
// threads (680 MB/s per thread, limit 10.88 GB/s)"
std::string decompression_text(const DecodeStats& d) {
  const double rate = thread_rate(d.raw_bytes, d.decode_busy_seconds);
  char line[512];
  std::snprintf(line, sizeof line,
                "decompression  %s: %.2f GB -> %.2f GB, %.2f s busy on %u threads (%.0f MB/s per thread, limit "
                "%.2f GB/s)\n",
                d.pipeline.c_str(), d.stored_bytes / 1e9, d.raw_bytes / 1e9, d.decode_busy_seconds, d.threads,
                rate / 1e6, rate * d.threads / 1e9);
  return line;
}

}  // namespace

double RunReport::effective_gb_per_s() const {
  return wall_seconds > 0 ? static_cast<double>(input_bytes + output_bytes) / wall_seconds / 1e9 : 0.0;
}

std::uint64_t RunReport::job_input_bytes() const {
  if (runs.empty()) return input_bytes;
  std::uint64_t total = 0;
  for (const auto& r : runs) total += r.input_bytes;
  return total;
}

std::uint64_t RunReport::job_output_bytes() const {
  if (runs.empty()) return output_bytes;
  std::uint64_t total = 0;
  for (const auto& r : runs) total += r.output_bytes;
  return total;
}

const StageStats* RunReport::bottleneck() const {
  const StageStats* slowest = nullptr;
  for (const auto& s : stages)
    if (s.seconds > 0 && (!slowest || s.seconds > slowest->seconds)) slowest = &s;
  return slowest;
}

namespace {

nlohmann::json runs_json(const RunReport& report) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : report.runs) {
    nlohmann::json units = nlohmann::json::array();
    for (const auto& [b, e] : r.units) units.push_back(nlohmann::json::array({b, e}));
    all.push_back({{"run", r.record.run},
                   {"this_run", r.record.run == report.run},
                   {"start_time", r.record.start_time},
                   {"end_time", r.record.end_time},
                   {"host", r.record.host},
                   {"ranks", r.record.ranks},
                   {"seconds", r.record.seconds},
                   {"unit_axis", report.unit_axis},
                   {"units", units},
                   {"unit_count", r.unit_count},
                   {"slabs", r.slabs},
                   {"input_bytes", r.input_bytes},
                   {"output_bytes", r.output_bytes}});
  }
  return all;
}

nlohmann::json stages_json(const std::vector<StageStats>& stages) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& s : stages) {
    nlohmann::json stage = {
        {"name", s.name}, {"bytes", s.bytes}, {"seconds", s.seconds}, {"gb_per_s", s.gb_per_s()}, {"slabs", s.slabs}};
    stage["limit_gb_per_s"] = s.limit_gb_per_s > 0 ? nlohmann::json(s.limit_gb_per_s) : nlohmann::json(nullptr);
    stage["fraction_of_limit"] =
        s.fraction_of_limit() >= 0 ? nlohmann::json(s.fraction_of_limit()) : nlohmann::json(nullptr);
    all.push_back(stage);
  }
  return all;
}

nlohmann::json limits_json(const Limits& limits) {
  nlohmann::json all = nlohmann::json::object();
  for (Stage stage : kAllStages) {
    const LinkLimit& link = limits.of(stage);
    if (!link.known()) continue;
    all[stage_name(stage)] = {{"gb_per_s", link.gb_per_s}, {"source", link_source_name(link.source)}};
    if (link.cached) all[stage_name(stage)]["cached_from"] = link.measured_at;
  }
  return all;
}

nlohmann::json checksum_json(const RunReport& report) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(report.global_bits));
  return {{"global_bits_hex", hex},
          {"global_bits", report.global_bits},
          {"date_sums", report.date_sums},
          {"date_bits", report.date_bits}};
}

// "ranks: 6 on node1 x2, node2 x2, node3 x2; 0.412 s in collectives"
std::string ranks_text(const RunReport& report) {
  std::ostringstream out;
  out << "ranks: " << report.ranks;
  const auto& hosts = report.rank_hosts;
  for (std::size_t r = 0; r < hosts.size();) {
    std::size_t n = 1;
    while (r + n < hosts.size() && hosts[r + n] == hosts[r]) ++n;
    out << (r == 0 ? " on " : ", ") << hosts[r];
    if (n > 1) out << " x" << n;
    r += n;
  }
  char line[64];
  std::snprintf(line, sizeof line, "; %.3f s in collectives\n", report.collective_seconds);
  return out.str() + line;
}

// A resumed job: the stage table is this run's; the job's totals count every run.
std::string runs_text(const RunReport& report) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "job: %zu runs (this is run %d), %.3f GB in, %.3f GB out in all\n",
                report.runs.size(), report.run, report.job_input_bytes() / 1e9, report.job_output_bytes() / 1e9);
  out += line;
  for (const auto& r : report.runs) {
    std::snprintf(line, sizeof line, "  run %d: %lld %s(s), %.3f GB out, %.1f s, %s to %s\n", r.record.run,
                  static_cast<long long>(r.unit_count), report.unit_axis.c_str(), r.output_bytes / 1e9,
                  r.record.seconds, r.record.start_time.empty() ? "?" : r.record.start_time.c_str(),
                  r.record.end_time.empty() ? "?" : r.record.end_time.c_str());
    out += line;
  }
  return out;
}

}  // namespace

std::string RunReport::to_text() const {
  std::ostringstream out;
  char line[256];
  out << "stage      bytes          busy s     GB/s   slabs  limit GB/s  % of limit\n";
  for (const auto& s : stages) {
    char limit[32] = "-", fraction[32] = "-";
    if (s.limit_gb_per_s > 0) std::snprintf(limit, sizeof limit, "%.2f", s.limit_gb_per_s);
    if (s.fraction_of_limit() >= 0) std::snprintf(fraction, sizeof fraction, "%.1f%%", 100.0 * s.fraction_of_limit());
    std::snprintf(line, sizeof line, "%-8s %12.3f GB %9.3f %8.2f %7d %11s %11s\n", s.name.c_str(), s.bytes / 1e9,
                  s.seconds, s.gb_per_s(), s.slabs, limit, fraction);
    out << line;
  }
  std::snprintf(line, sizeof line, "wall     %12.3f GB %9.3f %8.2f   (input + output bytes over wall time)\n",
                (input_bytes + output_bytes) / 1e9, wall_seconds, effective_gb_per_s());
  out << line;
  if (const StageStats* slowest = bottleneck(); slowest && wall_seconds > 0) {
    std::snprintf(line, sizeof line, "bottleneck: %s (busy %.0f%% of the wall time)\n", slowest->name.c_str(),
                  100.0 * slowest->seconds / wall_seconds);
    out << line;
  }
  if (kernel_on_pieces && limits.kernel.known()) {
    std::snprintf(line, sizeof line, "kernel: %s, so the kernel's limit (%.2f GB/s, data from memory) does not apply\n",
                  gpu.empty() ? "each piece multiplied in cache right after its read"
                              : "the I/O threads' launches of each piece's kernel",
                  limits.kernel.gb_per_s);
    out << line;
  }
  if (staging_bytes > 0) {
    std::snprintf(line, sizeof line,
                  "staging: %s of buffers made ready in %.3f s on their own thread, beside the stages",
                  format_bytes(staging_bytes).c_str(), staging_seconds);
    out << line;
    if (staging_reused_bytes > 0) out << " (" << format_bytes(staging_reused_bytes) << " kept from the previous run)";
    out << "\n";
  }
  if (decompression.raw_bytes > 0) out << decompression_text(decompression);
  if (startup.total_seconds > 0) out << "start-up: " << startup.describe() << "\n";
  if (ranks > 1) out << ranks_text(*this);
  if (runs.size() > 1 || (runs.size() == 1 && runs.front().record.run != run)) out << runs_text(*this);
  if (!host.empty()) out << "host: " << host << (gpu.empty() ? "" : ", GPU: " + gpu) << "\n";
  if (has_checksum) {
    std::snprintf(line, sizeof line, "checksum %016llx (wrapping uint64 sum of cv's bit patterns, %zu dates)\n",
                  static_cast<unsigned long long>(global_bits), date_bits.size());
    out << line;
  }
  return out.str();
}

std::string RunReport::to_json() const {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["version"] = version;
  j["versions"] = versions;
  j["host"] = host;
  j["gpu"] = gpu;
  j["outcome"] = outcome;
  j["input"] = input_json(*this);
  j["output"] = output;
  j["space"] = space;
  j["kernel"] = kernel;
  j["slicing"] = slicing;
  j["plan"] = plan_json(*this);
  j["config"] = config_yaml.empty() ? nlohmann::json::object() : nlohmann::json::parse(yaml_to_json(config_yaml));
  j["config_yaml"] = config_yaml;
  j["wall_seconds"] = wall_seconds;
  if (const StageStats* slowest = bottleneck()) j["bottleneck"] = slowest->name;
  j["device_path_seconds"] = device_path_seconds;
  j["any_stage_seconds"] = any_stage_seconds;
  j["staging_bytes"] = staging_bytes;
  j["staging_seconds"] = staging_seconds;
  j["staging_reused_bytes"] = staging_reused_bytes;
  j["kernel_on_pieces"] = kernel_on_pieces;
  // The job's totals, every run's work; this run's own figures (the stages,
  // the wall time and the rate) are in this_run.
  j["input_bytes"] = job_input_bytes();
  j["output_bytes"] = job_output_bytes();
  j["effective_gb_per_s"] = effective_gb_per_s();
  j["slabs"] = {{"total", slabs_total}, {"run", slabs_run}, {"skipped_resumed", slabs_skipped}};
  j["this_run"] = {{"run", run},
                   {"input_bytes", input_bytes},
                   {"output_bytes", output_bytes},
                   {"wall_seconds", wall_seconds},
                   {"effective_gb_per_s", effective_gb_per_s()},
                   {"slabs", slabs_run}};
  j["runs"] = runs_json(*this);
  j["stages"] = stages_json(stages);
  j["limits"] = limits_json(limits);
  j["ranks"] = ranks;
  if (!rank_hosts.empty()) j["rank_hosts"] = rank_hosts;
  if (ranks > 1) j["collective_seconds"] = collective_seconds;
  if (startup.total_seconds > 0) {
    j["startup_seconds"] = startup.total_seconds;
    j["startup_phases"] = nlohmann::json::array();
    for (const auto& phase : startup.phases)
      j["startup_phases"].push_back({{"name", phase.name}, {"seconds", phase.seconds}});
  }
  if (!compression.codec.empty()) j["compression"] = compression_json(compression);
  if (decompression.raw_bytes > 0) j["decompression"] = decompression_json(decompression);
  if (has_checksum) j["checksum"] = checksum_json(*this);
  return j.dump(2) + "\n";
}

std::vector<StageStats> empty_stages(bool device_copies) {
  std::vector<StageStats> stages;
  for (Stage stage : pipeline_stages(device_copies)) {
    stages.emplace_back();
    stages.back().name = stage_name(stage);
  }
  return stages;
}

void apply_limits(RunReport& report, const Limits& limits) {
  report.limits = limits;
  for (auto& stage : report.stages) {
    const LinkLimit* link =
        report.kernel_on_pieces && stage.name == stage_name(Stage::kernel) ? nullptr : limits.of(stage.name);
    stage.limit_gb_per_s = link && link->known() ? link->gb_per_s : 0.0;
    stage.limit_source = link && link->known() ? link_source_name(link->source) : "";
  }
}

void write_report(const RunReport& report, const std::string& path) {
  write_file_atomically(path, report.to_json(), "report");
}

}  // namespace discount
