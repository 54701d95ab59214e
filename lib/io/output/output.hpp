// The file output. It implements the output protocol of docs/architecture.md:
// `<out>.partial` is created whole (structure, fingerprint, pre-allocated
// contiguous data) and renamed into place; after that only raw bytes at fixed
// offsets change, so a kill -9 cannot corrupt HDF5 metadata. Progress is a
// table of done ranges with checksums of what was written and of the input
// it came from (io/records/unit_record.hpp), kept in the master file.
//
// output.layout: single keeps cv in the master file. split makes cv a virtual
// dataset mapped onto part files in a folder beside the master
// (io/records/output_parts.hpp); each part covers consecutive whole slabs of
// the chunk axis and takes writes of its own, so several writers proceed at
// the separate-files rate. FileOutput is the lifecycle (create, resume,
// publish, discard) over a ProgressRecord (io/records/progress_record.hpp:
// the done ranges, slots and checkpoints) and a PartSet
// (io/records/part_set.hpp: the bounds, data files and part folder). The
// other concerns live apart: the sink interface (io/output/output_sink.hpp),
// the lock (io/output/output_lock.hpp), what an existing output records
// (io/output/output_existing.hpp), creation (output_create.cpp), the run
// record (output_runs.cpp), resume checks (output_resume.cpp), the checksum
// sink (io/output/checksum_output.hpp) and the hash (common/fingerprint.hpp).
#pragma once

#include <fcntl.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/axis.hpp"
#include "common/fingerprint.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/input.hpp"
#include "io/output/checksum_output.hpp"
#include "io/output/output_existing.hpp"
#include "io/output/output_lock.hpp"
#include "io/records/output_record.hpp"
#include "io/output/output_sink.hpp"
#include "io/compress/part_encoder.hpp"
#include "io/records/part_set.hpp"
#include "io/records/progress_record.hpp"
#include "io/records/output_spec.hpp"
#include "io/records/part_compress.hpp"
#include "io/records/run_history.hpp"
#include "io/records/unit_record.hpp"
#include "io/posix/posix_io.hpp"
#include "plan/plan.hpp"

namespace discount {

// The output's box for a slab, in its axes order (the same mapping the
// reader uses for the input).
FileBox output_box(const OutputSpec& spec, Range dates, Range ids);
// A float32 output's overflow under input.nonfinite: error (65), naming the
// element: `index` in the slab's values, in the output's axis order.
[[noreturn]] void throw_overflow(const OutputSpec& spec, Range dates, Range ids, std::int64_t index, double value);

class FileOutput final : public OutputSink {
 public:
  enum class State { fresh, resumed, already_complete };
  // Creates or resumes `<out>.partial`; refuses with ExitCode::cannot_create,
  // also when another job holds the output's lock (see take_output_lock).
  explicit FileOutput(const OutputSpec& spec);
  ~FileOutput() override;
  State state() const { return state_; }
  std::int64_t units_done() const;
  bool slab_done(const Slab& slab) const override;
  void write_slab(const Slab& slab, const double* buffer, const InputSums& input = {}) override;
  // Page-cache writes of a slab that lies in one data file (output_pieces.cpp);
  // null with O_DIRECT or MPI-IO, or for a slab across a part's edge.
  std::unique_ptr<SlabPieces> slab_pieces(const Slab& slab) override;
  bool wants_input_sums() const override { return true; }
  int writer_threads() const override;
  std::vector<int> write_order(const std::vector<int>& pending) const override;
  void checkpoint() override;
  // Collective, every rank: with a parallel HDF5, several ranks and the
  // single layout, slabs go through HDF5's MPI-IO driver (independent H5Dwrite
  // of each hyperslab) between these two calls; otherwise positional writes
  // at the dataset's offset. The progress record and fdatasync are the same
  // either way.
  void open_collective();
  void close_collective() override;
  void flush() override;
  // Checks that every unit is recorded as done, stamps the end time, renames;
  // with split, then removes the part folder of the output it replaced.
  void finish_share(int rank, int ranks) override;
  void publish() override;
  CompressStats compression() const override { return compression_; }
  // A fresh output given up (bad input data): the partial and its parts go.
  void discard();
  void discard_if_fresh() override {
    if (state_ == State::fresh) discard();
  }
  bool already_complete() const override { return state_ == State::already_complete; }
  std::string progress_path() const override { return partial_path(); }
  std::string describe() const override;
  // This run's number in the file's run record (1 for a fresh output).
  int run_number() const override { return run_; }
  // The runs recorded in the output (published) or its partial, with the
  // units each wrote; empty records for a file from an older version.
  std::optional<RunHistory> run_history() const override;
  std::string partial_path() const { return spec_.path + ".partial"; }
  // `<out>.partial.lock`: flock()ed for the whole run by the job's owner rank.
  std::string lock_path() const { return spec_.path + ".partial.lock"; }
  // The split layout's part folder (its path), empty for single.
  std::string parts_folder() const { return parts_.folder(); }

 private:
  void create();  // output_create.cpp
  void check_create_room(std::uint64_t needed) const;
  void create_master(const std::string& tmp, std::uint64_t data_bytes, const std::string& folder_name);
  void write_master_structure(hid_t file, const std::string& folder_name);
  void write_master_attributes(hid_t file, hid_t group, hid_t data, const std::string& folder_name) const;
  void reserve_master(const std::string& tmp, std::uint64_t data_bytes);
  void check_output_folder() const;  // output.cpp
  bool finished_is_current();
  void start_writing();
  bool try_resume();  // output_resume.cpp
  void check_resume(int fd);
  void check_resume_inputs(int fd);
  void check_finished_inputs();
  void check_finished_parts();  // output_finished.cpp
  void check_nonfinite_change() const;
  std::string resume_refusal() const;
  bool read_split_layout(hid_t file);
  std::int64_t unit_count() const;
  std::uint64_t piece_bytes() const;
  std::pair<std::int64_t, std::int64_t> units_of(const Slab& slab) const;
  // Units [b, e) written with checksum out_sum: queued for the next checkpoint.
  void record_written(std::int64_t b, std::int64_t e, std::uint64_t out_sum, const InputSums& input);
  void write_run_record(int fd) const;  // output_runs.cpp
  void stamp_run_record() const;
  // Throws internal_error when the progress record misses a unit.
  void check_all_done() const;
  // output.compression: the parts f with f % ranks == rank not yet
  // compressed, compressed in place once all units are durable; one line on
  // stderr says how.
  void compress_parts(int rank, int ranks);
  // output.compression in one process (output_stream.cpp): the parts stream
  // into their compressed selves while the run writes; written units and
  // durable parts are passed on; finish_streaming waits for the last.
  void start_streaming();
  void stream_written(std::int64_t b, std::int64_t e);
  void stream_durable();
  void finish_streaming();

  OutputSpec spec_;
  std::shared_ptr<const ExistingOutput> existing_;
  State state_ = State::fresh;
  ProgressRecord record_;  // the done ranges, in the partial
  PartSet parts_;          // the data files: the partial's own dataset or the parts
  // The run table (docs/architecture.md): one record per run. 0: none.
  std::uint64_t runs_offset_ = 0;
  int run_ = 1;
  std::string run_start_utc_;
  std::chrono::steady_clock::time_point run_start_ = std::chrono::steady_clock::now();
  bool published_ = false;
  HeldLock lock_;  // from construction to destruction: one job per output
  // The single layout's dataset through MPI-IO between open_collective and
  // close_collective (the data file writes through it); closes before the lock goes.
  std::unique_ptr<BoxWriter> collective_;
  CompressStats compression_;  // what compress_parts() did (nothing: all 0)
  // output.compression in one process: the stream of the parts not yet
  // compressed (files[k]: stream part k's data file). Declared last: its
  // threads end before the files go.
  struct Stream {
    std::vector<std::size_t> files;
    std::unique_ptr<PartStream> parts;
  } stream_;
};

}  // namespace discount
