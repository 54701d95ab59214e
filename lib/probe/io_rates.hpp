// The disk rates `discount_app plan` measures now: a few hundred
// milliseconds of the input read, and of a scratch file written in the
// output's folder, through the run's own reader and writer. The prediction
// itself is pure (plan/plan.hpp: predict, predict_wall); the other sources of
// rates are `limits:` (plan/limits.hpp) and an earlier run's report
// (probe/earlier_report.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "io/input/input.hpp"
#include "io/records/output_spec.hpp"
#include "plan/plan.hpp"

namespace discount {

// How much a measurement may take: it stops after the piece that crosses
// `seconds` or `max_bytes`, so the page cache it warms stays bounded.
struct ProbeBudget {
  double seconds = 0.3;
  std::uint64_t max_bytes = std::uint64_t{256} << 20;
  // Bytes of discount per piece; 0: what the run's parallel I/O moves in one
  // go (16 MiB per I/O thread, at least 32 MiB, at most 128 MiB), and never
  // more than one of the plan's slabs.
  std::uint64_t piece_bytes = 0;
};

struct ProbeResult {
  std::uint64_t bytes = 0;  // counted as the stage counts them: 8 bytes per element
  double seconds = 0;       // the timed transfers
  int pieces = 0;
  std::string detail;  // how it was measured, or why nothing was
  bool ok() const { return bytes > 0 && seconds > 0; }
  double gb_per_s() const { return ok() ? static_cast<double>(bytes) / seconds / 1e9 : 0.0; }
};

// Reads probe_pieces() of the selection through input.read_discount, the
// run's own reader: positional reads for a contiguous file, HDF5's chunk
// cache and filters (a gzip input's rate is its decompress rate) otherwise.
// `touch_gb_per_s` is set to the rate at which fresh host pages are first
// touched (the run's slab buffers pay it once). `scan`: the run checks each
// slab for NaN/Inf (input.nonfinite: error), so the probe does too. Throws
// discount::Error on a read failure, as the run would.
ProbeResult probe_read(InputSource& input, const Plan& plan, Range dates, Range ids, bool scan,
                       const ProbeBudget& budget, double& touch_gb_per_s);

struct WriteProbe : ProbeResult {
  std::string folder;           // where the scratch file was written
  bool folder_missing = false;  // the output's folder does not exist: its nearest existing parent
  double create_seconds = -1;   // creating, reserving (posix_fallocate) and syncing the scratch file
  // Closing the removed scratch file, which frees its blocks: the rate at
  // which the run's publish frees an output it replaces (GB/s; 0 unknown).
  double free_gb_per_s = 0;
};
// Writes probe_pieces() of the output's layout into a scratch file in the
// output's folder with the run's writer (O_DIRECT through DirectWriter unless
// output.direct_io is off), syncs it, and removes it. The file's name is
// unlinked right after it is opened, so nothing is left behind even when
// plan is killed. A folder that does not exist yet is measured in its
// nearest existing parent. A failure leaves the rate unknown (detail says why).
// OutputMode::checksum has no file: the probe feeds the pieces to the run's
// checksum sink instead.
WriteProbe probe_write(const OutputSpec& output, OutputMode mode, const Plan& plan, const ProbeBudget& budget);

// Bytes free for an unprivileged user on the file system holding `path`'s
// directory (statvfs); 0 when unknown.
std::uint64_t free_disk_bytes(const std::string& path);

// "out/x" -> "out", "x" -> ".", "/x" -> "/".
std::string folder_of(const std::string& path);

}  // namespace discount
