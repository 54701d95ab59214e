// Where results go. The file sink implements the output protocol of
// docs/architecture.md: `<out>.partial` is created whole (structure, fingerprint,
// pre-allocated contiguous dataset) and renamed into place; after that only
// raw bytes at fixed offsets change, so a kill -9 cannot corrupt HDF5
// metadata. Progress is a table of done ranges with checksums of what was
// written and of the input it came from (io/unit_record.hpp).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/hdf5_handle.hpp"
#include "io/output_record.hpp"
#include "io/output_spec.hpp"
#include "io/posix_io.hpp"
#include "io/unit_record.hpp"
#include "plan/plan.hpp"
#include "report/runs.hpp"

namespace discount {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // True when every element of the slab is already durable (resume).
  virtual bool slab_done(const Slab& slab) const = 0;
  // Buffer holds the slab packed in the output's axis order; `input`: the
  // checksums of the input bytes it was computed from (when known). The
  // caller's buffer is free after the call: a sink may reuse its memory (the
  // file sink packs float32 values there, output.dtype).
  virtual void write_slab(const Slab& slab, const double* buffer, const InputSums& input = {}) = 0;
  // The sink records input checksums: the reader takes them.
  virtual bool wants_input_sums() const { return false; }
  // Makes every written slab durable and records it (before a stop).
  virtual void checkpoint() {}
  // This rank is done: everything it wrote is durable and recorded.
  virtual void flush() {}
  // Once every rank has flushed, on rank 0 only: the result becomes visible.
  virtual void publish() {}
  virtual std::string describe() const = 0;
};

// A lock file held through a flock()ed descriptor; on destruction the file
// is unlinked while still locked, then the descriptor closes.
struct HeldLock {
  UniqueFd fd;
  std::string path;
  HeldLock() = default;
  HeldLock(HeldLock&&) = default;
  HeldLock& operator=(HeldLock&&) = default;
  ~HeldLock();
};

class FileOutput final : public OutputSink {
 public:
  enum class State { fresh, resumed, already_complete };
  // Creates or resumes `<out>.partial`; refuses with ExitCode::cannot_create,
  // also when another job holds the output's lock (see take_lock).
  explicit FileOutput(const OutputSpec& spec);
  ~FileOutput() override;
  State state() const { return state_; }
  std::int64_t units_done() const;
  bool slab_done(const Slab& slab) const override;
  void write_slab(const Slab& slab, const double* buffer, const InputSums& input = {}) override;
  bool wants_input_sums() const override { return true; }
  void checkpoint() override;
  // Collective, every rank: with a parallel HDF5 and several ranks, slabs go
  // through HDF5's MPI-IO driver (independent H5Dwrite of each hyperslab)
  // between these two calls; otherwise positional writes at the dataset's
  // offset. The progress record and fdatasync are the same either way.
  void open_collective();
  void close_collective();
  void flush() override;
  // Checks that every unit is recorded as done, stamps the end time, renames.
  void publish() override;
  std::string describe() const override;
  // This run's number in the file's run record (1 for a fresh output).
  int run_number() const { return run_; }
  // The runs recorded in the output (published) or its partial, with the
  // units each wrote; empty records for a file from an older version.
  RunHistory run_history() const;
  std::string partial_path() const { return spec_.path + ".partial"; }
  // `<out>.partial.lock`: flock()ed for the whole run by the job's rank 0.
  std::string lock_path() const { return spec_.path + ".partial.lock"; }

 private:
  void take_lock();
  void create();
  bool try_resume();
  void check_resume(int fd);
  void check_finished_inputs();
  void drop_slots(int fd, const std::vector<std::size_t>& slots);
  void share_free_slots();
  std::string resume_refusal(const std::string& partial) const;
  void open_fd();
  std::int64_t unit_count() const;
  std::uint64_t piece_bytes() const;
  std::pair<std::int64_t, std::int64_t> units_of(const Slab& slab) const;
  void write_run_record(int fd) const;
  void stamp_run_record() const;

  OutputSpec spec_;
  State state_ = State::fresh;
  int fd_ = -1;
  std::unique_ptr<DirectWriter> direct_;  // when spec_.direct_io
  RecordLayout layout_;  // the data's and the record's offsets
  RangeTable table_;     // the done ranges as recorded
  std::vector<std::size_t> free_slots_;  // this rank's share of the empty slots (taken from the back)
  std::vector<std::size_t> own_slots_;   // the slots this rank filled in this run
  std::size_t scarce_at_ = 2;            // with this few empty slots left, entries extend
  // The run table (docs/architecture.md): one record per run. 0: none.
  std::uint64_t runs_offset_ = 0;
  int run_ = 1;
  std::string run_start_utc_;
  std::chrono::steady_clock::time_point run_start_ = std::chrono::steady_clock::now();
  bool published_ = false;
  std::vector<DoneRange> unrecorded_;  // written, not yet durable
  std::chrono::steady_clock::time_point last_checkpoint_ = std::chrono::steady_clock::now();
  HeldLock lock_;                 // from construction to destruction: one job per output
  h5::Id mpio_file_, mpio_data_;  // when writing through MPI-IO; the dataset closes first
};

// output.mode: checksum. Per selected date: the float64 sum of cv (for
// reading) and the wrapping uint64 sum of cv's bit patterns (exact, order
// independent: NumPy recomputes it as cv.view(np.uint64).sum()).
class ChecksumOutput final : public OutputSink {
 public:
  ChecksumOutput(std::array<Axis, 3> axes, std::int64_t dates, std::int64_t ids, std::int64_t nums);
  bool slab_done(const Slab&) const override { return false; }
  void write_slab(const Slab& slab, const double* buffer, const InputSums& input = {}) override;
  std::string describe() const override { return "checksum sink (no file)"; }
  // Adds up every rank's partial sums (a collective under MPI).
  void combine_ranks();
  const std::vector<double>& date_sums() const { return sums_; }
  const std::vector<std::uint64_t>& date_bits() const { return bits_; }
  std::uint64_t global_bits() const;

 private:
  std::array<Axis, 3> axes_;
  std::int64_t dates_, ids_, nums_;
  std::vector<double> sums_;
  std::vector<std::uint64_t> bits_;
};

// FNV-1a 64-bit of the text, as 16 hex digits.
std::string fingerprint_of(const std::string& text);

// The chunk axis an earlier run of this output recorded, and where: the
// existing `<path>.partial` ("the existing partial"), or, with none there and
// output.overwrite off, the finished `<path>` ("the finished output"), so that
// memory.chunk_axis: auto resumes (or finds complete) what is there. Empty
// with restart, or when neither file records one.
struct RecordedChunkAxis {
  Axis axis = Axis::date;
  std::string where;
};
std::optional<RecordedChunkAxis> recorded_chunk_axis(const std::string& path, bool overwrite, bool restart);

}  // namespace discount
