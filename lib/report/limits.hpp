// The speed limit of each link a slab crosses (disk read, H2D, kernel, D2H,
// disk write), measured at start-up or configured under `limits:`. The plan
// predicts a time per stage from them and the run report gives each stage's
// fraction of its limit.
//
// This header is plain C++ (no Kokkos), so the pure plan can use Limits;
// measure_limits, which runs Kokkos copies, lives in limits.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "plan/stages.hpp"

namespace discount {

struct LimitsConfig;  // config/config.hpp

// GB/s are 1e9 bytes per second, counted the way the pipeline counts the
// stage's bytes (the kernel: bytes read + bytes written).
struct LinkLimit {
  double gb_per_s = 0;  // 0: unknown
  std::string source;   // "measured" | "configured" | "" (unknown)
  // A measurement taken from this host's cache (report/limits_cache.hpp), and when it was made.
  bool cached = false;
  std::string measured_at = {};
  bool known() const { return gb_per_s > 0; }
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

// The configured values only (source "configured"); everything else unknown.
// No Kokkos: usable before Kokkos::initialize (the `plan` command).
Limits configured_limits(const LimitsConfig& config);

// Call after Kokkos::initialize. Starts from configured_limits and, unless
// config.measure is false, measures each copy/kernel link the job uses that
// is not configured (a few repetitions over 256 MiB buffers, the best one;
// well under a second):
//  - device_copies (kernel in a device memory space): h2d and d2h as
//    Kokkos::deep_copy between pinned host memory and the device, kernel as a
//    device-to-device copy counted as bytes read + bytes written;
//  - otherwise kernel as an in-place parallel pass over host memory in
//    Kokkos::DefaultHostExecutionSpace, bytes read + bytes written.
// Disk links are never measured. A measurement that fails (no memory) leaves
// its link unknown rather than failing the job.
// max_buffer_bytes caps the measuring buffers (256 MiB each by default) so a
// job with a small memory budget stays within it.
Limits measure_limits(const LimitsConfig& config, bool device_copies,
                      std::uint64_t max_buffer_bytes = std::uint64_t{256} << 20);

// Bytes free for an unprivileged user on the file system holding `path`'s
// directory (statvfs); 0 when unknown.
std::uint64_t free_disk_bytes(const std::string& path);

}  // namespace discount
