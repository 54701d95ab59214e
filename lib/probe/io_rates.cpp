#include "probe/io_rates.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "backend/host_pages.hpp"
#include "common/host_parallel.hpp"
#include "common/paths.hpp"
#include "common/sizes.hpp"
#include "io/input/finite.hpp"
#include "io/output/output.hpp"
#include "io/posix/box.hpp"
#include "io/posix/posix_io.hpp"
#include "io/posix/slab_write.hpp"

namespace discount {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::uint64_t auto_piece(const Plan& plan, const ProbeBudget& budget) {
  const std::uint64_t row = static_cast<std::uint64_t>(plan.request.nums) * plan.request.element_bytes;
  std::uint64_t piece = budget.piece_bytes;
  if (piece == 0)
    piece =
        std::clamp<std::uint64_t>(std::uint64_t{io_threads()} << 24, std::uint64_t{32} << 20, std::uint64_t{128} << 20);
  return std::max(row, std::min(piece, plan.slab_bytes));
}

std::uint64_t piece_bytes_of(const Slab& piece, const Plan& plan) {
  return static_cast<std::uint64_t>(piece.elements()) * plan.request.element_bytes;
}

// A buffer of `bytes` whose pages are already touched; the touch's rate (GB/s) in `touch_gb_per_s`.
HostPages touched(std::uint64_t bytes, double& touch_gb_per_s) {
  HostPages pages(static_cast<std::size_t>(bytes));
  const auto t0 = Clock::now();
  auto* data = static_cast<double*>(pages.data());
  const std::size_t n = bytes / sizeof(double);
  for (std::size_t j = 0; j < n; ++j) data[j] = 1.0 + static_cast<double>(j & 1023) * 0x1p-20;
  const double seconds = seconds_since(t0);
  touch_gb_per_s = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
  return pages;
}

// The largest piece's bytes: the buffer a probe needs.
std::uint64_t largest_piece_bytes(const std::vector<Slab>& pieces, const Plan& plan) {
  std::uint64_t largest = 0;
  for (const Slab& piece : pieces) largest = std::max(largest, piece_bytes_of(piece, plan));
  return largest;
}

}  // namespace

ProbeResult probe_read(InputSource& input, const Plan& plan, Range dates, Range ids, bool scan,
                       const ProbeBudget& budget, double& touch_gb_per_s) {
  ProbeResult result;
  const std::vector<Slab> pieces = probe_pieces(plan, auto_piece(plan, budget), budget.max_bytes);
  const std::uint64_t largest = largest_piece_bytes(pieces, plan);
  if (largest == 0) {
    result.detail = "nothing to read";
    return result;
  }
  HostPages buffer = touched(largest, touch_gb_per_s);
  std::vector<double> mult;
  std::atomic<bool> nonfinite{false};  // the scan's finding, unused: a probe only times it
  auto* data = static_cast<double*>(buffer.data());
  const auto start = Clock::now();
  for (const Slab& piece : pieces) {
    const Range d{dates.begin + piece.dates.begin, dates.begin + piece.dates.end};
    const Range i{ids.begin + piece.ids.begin, ids.begin + piece.ids.end};
    // Id slabs bring their own multBy rows, as in the run's reader.
    if (plan.mult_per_slab) {
      mult.resize(static_cast<std::size_t>(i.size() * piece.nums));
      input.read_multiplier(i, mult.data());
      result.bytes += mult.size() * sizeof(double);
    }
    // As the run's reader: a scan takes each piece as it lands.
    if (scan)
      input.read_discount_visited(d, i, data, [data, &nonfinite](std::int64_t first, std::int64_t count) {
        if (find_nonfinite_here(data + first, count) >= 0) nonfinite = true;
      });
    else
      input.read_discount(d, i, data);
    result.bytes += piece_bytes_of(piece, plan);
    ++result.pieces;
    if (seconds_since(start) >= budget.seconds) break;
  }
  result.seconds = seconds_since(start);
  std::ostringstream detail;
  detail << format_bytes(result.bytes) << " in " << result.pieces << " piece(s) in " << std::fixed;
  detail.precision(3);
  detail << result.seconds << " s";
  result.detail = detail.str();
  return result;
}

namespace {

// The checksum sink: no file, the sums only.
void probe_checksum_write(const OutputSpec& output, const Plan& plan, const ProbeBudget& budget,
                          const std::vector<Slab>& pieces, const double* data, WriteProbe& result) {
  ChecksumOutput sink(output.axes, output.dates, output.ids, output.nums);
  const auto start = Clock::now();
  for (const Slab& piece : pieces) {
    sink.write_slab(piece, data);
    result.bytes += piece_bytes_of(piece, plan);
    ++result.pieces;
    if (seconds_since(start) >= budget.seconds) break;
  }
  result.seconds = seconds_since(start);
  result.detail = format_bytes(result.bytes) + " through the checksum sink";
}

// The pieces' runs in the output's layout, moved to start at byte 0, and the
// bytes they span.
std::uint64_t scratch_runs(const OutputSpec& output, const std::vector<Slab>& pieces,
                           std::vector<std::vector<Run>>& runs) {
  std::int64_t first = -1, last = 0;
  for (const Slab& piece : pieces) {
    const FileBox box = discount_box({output.dates, output.ids, output.nums}, output.axes, piece.dates, piece.ids);
    runs.push_back(box_runs(box.dims, box.start, box.count));
    for (const Run& run : runs.back()) {
      first = first < 0 ? run.offset : std::min(first, run.offset);
      last = std::max(last, run.offset + run.length);
    }
  }
  for (auto& piece_runs : runs)
    for (Run& run : piece_runs) run.offset -= first;
  return static_cast<std::uint64_t>(last - first) * sizeof(double);
}

// The pieces written as the run writes them, then made durable; false (and
// the reason in `detail`) when a write fails.
bool write_scratch(int fd, DirectWriter* direct, const Plan& plan, const ProbeBudget& budget,
                   const std::vector<Slab>& pieces, const std::vector<std::vector<Run>>& runs, const double* data,
                   WriteProbe& result) {
  try {
    const std::string what = "writing a scratch file in '" + result.folder + "'";
    const auto start = Clock::now();
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      write_runs_to(fd, direct, 0, runs[p], data, sizeof(double), what);
      result.bytes += piece_bytes_of(pieces[p], plan);
      ++result.pieces;
      if (seconds_since(start) >= budget.seconds) break;
    }
    // The run makes its writes durable (checkpoints, the final flush).
    if (::fdatasync(fd) != 0) throw io_error(what + ": fdatasync failed: " + std::strerror(errno));
    result.seconds = seconds_since(start);
    return true;
  } catch (const Error& e) {
    result.bytes = 0;
    result.seconds = 0;
    result.detail = e.what();
    return false;
  }
}

}  // namespace

WriteProbe probe_write(const OutputSpec& output, OutputMode mode, const Plan& plan, const ProbeBudget& budget) {
  WriteProbe result;
  const std::vector<Slab> pieces = probe_pieces(plan, auto_piece(plan, budget), budget.max_bytes);
  const std::uint64_t largest = largest_piece_bytes(pieces, plan);
  if (largest == 0) {
    result.detail = "nothing to write";
    return result;
  }
  double touch = 0;
  HostPages buffer = touched(largest, touch);
  const auto* data = static_cast<const double*>(buffer.data());
  if (mode == OutputMode::checksum) {
    probe_checksum_write(output, plan, budget, pieces, data, result);
    return result;
  }
  const std::string wanted = dir_of(output.path);
  result.folder = existing_folder(wanted);
  result.folder_missing = result.folder != wanted;
  std::vector<std::vector<Run>> runs;
  const std::uint64_t span = scratch_runs(output, pieces, runs);
  const std::string path = result.folder + "/.discount_app-plan-" + std::to_string(::getpid()) + ".scratch";
  const auto created = Clock::now();
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    result.detail = "cannot create a scratch file in '" + result.folder + "': " + std::strerror(errno);
    return result;
  }
  std::unique_ptr<DirectWriter> direct;
  if (output.direct_io)
    direct = std::make_unique<DirectWriter>(path, output.direct_piece ? output.direct_piece : DirectWriter::kMaxPiece);
  // Both descriptors are open: the name can go now, so that nothing is left
  // behind even if plan is killed while it writes.
  ::unlink(path.c_str());
  // Reserved as the run reserves its output (io/output/output_create.cpp), when the span is
  // not much more than what is written (a strided layout spreads it out).
  if (span <= 4 * budget.max_bytes) (void)::posix_fallocate(fd.get(), 0, static_cast<off_t>(span));
  ::fsync(fd.get());
  result.create_seconds = seconds_since(created);
  if (!write_scratch(fd.get(), direct.get(), plan, budget, pieces, runs, data, result)) return result;
  const bool through_direct = direct && direct->active();
  std::uint64_t allocated = 0;
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0) allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
  const auto closing = Clock::now();
  if (direct) direct->close();
  fd.reset();
  const double free_seconds = seconds_since(closing);
  if (free_seconds > 0 && allocated > 0) result.free_gb_per_s = static_cast<double>(allocated) / free_seconds / 1e9;
  std::ostringstream detail;
  detail << format_bytes(result.bytes) << " in " << result.pieces << " piece(s) in " << std::fixed;
  detail.precision(3);
  detail << result.seconds << " s to a scratch file in " << result.folder
         << (through_direct ? " (O_DIRECT" : " (page cache") << ", synced, removed)";
  result.detail = detail.str();
  return result;
}

std::uint64_t free_disk_bytes(const std::string& path) {
  struct statvfs info {};
  if (::statvfs(existing_folder(dir_of(path)).c_str(), &info) != 0) return 0;
  return static_cast<std::uint64_t>(info.f_bavail) * static_cast<std::uint64_t>(info.f_frsize);
}

std::string folder_of(const std::string& path) { return dir_of(path); }

}  // namespace discount
