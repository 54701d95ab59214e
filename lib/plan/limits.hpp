// The speed limit of each link a slab crosses (disk read, H2D, kernel, D2H,
// disk write): measured (lib/probe), configured under `limits:`, or taken
// from an earlier run's report. The plan predicts a time per stage from them
// and the run report gives each stage's fraction of its limit. Plain C++ (no
// Kokkos, no I/O): the measuring lives in lib/probe.
#pragma once

#include <cstdint>
#include <string>

#include "plan/stages.hpp"

namespace discount {

struct LimitsConfig;  // config/config.hpp

// Where a link's figure came from. The code decides on this; the words
// people read are LinkLimit::source_text().
enum class LinkSource {
  unknown,         // no figure
  configured,      // `limits:` in the config
  measured,        // timed on this host (now, or taken from its cache)
  earlier_report,  // an earlier run's JSON report of the same job (plan only)
};
// "" | "configured" | "measured" | "report": the JSON report's `source`.
const char* link_source_name(LinkSource source);

// GB/s are 1e9 bytes per second, counted the way the pipeline counts the
// stage's bytes (the kernel: bytes read + bytes written).
struct LinkLimit {
  double gb_per_s = 0;  // 0: unknown
  LinkSource source = LinkSource::unknown;
  // A measurement taken from this host's cache (probe/limits_cache.hpp), and when it was made.
  bool cached = false;
  std::string measured_at = {};
  // Words for people where the source's name says too little: "measured
  // now", "report run.json of 2026-12-01 03:41 UTC (7 min ago)". Empty: the name.
  std::string note = {};
  bool known() const { return gb_per_s > 0; }
  std::string source_text() const { return note.empty() ? link_source_name(source) : note; }
};

struct Limits {
  LinkLimit read, h2d, kernel, d2h, write;

  // The link a stage crosses.
  const LinkLimit& of(Stage stage) const {
    const LinkLimit* links[kStageCount] = {&read, &h2d, &kernel, &d2h, &write};
    return *links[static_cast<int>(stage)];
  }
  LinkLimit& of(Stage stage) { return const_cast<LinkLimit&>(static_cast<const Limits&>(*this).of(stage)); }
  // By stage_name(); nullptr for any other name.
  const LinkLimit* of(const std::string& name) const {
    Stage stage = Stage::read;
    return stage_named(name, stage) ? &of(stage) : nullptr;
  }
  // One line: "read 2.50 GB/s (configured), h2d 55.1 GB/s (measured), ..., write unknown".
  std::string describe() const;
};

// The link of `stage`, to set.
inline LinkLimit& link_of(Limits& limits, Stage stage) { return limits.of(stage); }

// The configured values only (source configured); everything else unknown.
Limits configured_limits(const LimitsConfig& config);

}  // namespace discount
