// Where results go: the interface the pipeline writes slabs to. The file
// output (io/output/output.hpp) and the checksum sink (io/output/checksum_output.hpp)
// implement it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <functional>
#include <optional>

#include "io/records/output_spec.hpp"
#include "io/records/part_compress.hpp"
#include "io/records/run_history.hpp"
#include "plan/plan.hpp"

namespace discount {

// memory.staging: none: one slab written piece by piece from the caller's
// small buffer, on the caller's thread. The pieces hold the slab packed in
// the output's axis order, as write_slab's buffer does, and together cover
// it once.
class SlabPieces {
 public:
  virtual ~SlabPieces() = default;
  // Elements [first, first + count) of the slab. `values` may be changed
  // (output.dtype: float32 packs them in place).
  virtual void write(std::int64_t first, std::int64_t count, double* values) = 0;
  // Where elements [first, first + count) of the slab go, when a GPU may copy
  // them there itself: one contiguous float64 run, page-locked (an array
  // pinned in place). Null otherwise; then write().
  virtual double* in_place(std::int64_t, std::int64_t) { return nullptr; }
  // Every piece written: the slab is recorded as write_slab records it.
  virtual void finish(const InputSums& input) = 0;
};

// What a sink without a file adds up (output.mode: checksum): per selected
// date the float64 sum of cv and the wrapping uint64 sum of its bit patterns.
struct OutputChecksums {
  std::vector<double> date_sums;
  std::vector<std::uint64_t> date_bits;
  std::uint64_t global_bits = 0;
};

// Replaces each vector by its element-wise sum over the ranks (the caller's
// collective; io makes none itself).
struct RankSums {
  std::function<void(std::vector<double>&)> floats;
  std::function<void(std::vector<std::uint64_t>&)> bits;
};

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // True when an earlier run finished this job's output: nothing to do.
  virtual bool already_complete() const { return false; }
  // Where the progress of a stopped run is kept for the resume ("" when
  // nowhere): the stop message names it.
  virtual std::string progress_path() const { return {}; }
  // True when every element of the slab is already durable (resume).
  virtual bool slab_done(const Slab& slab) const = 0;
  // Buffer holds the slab packed in the output's axis order; `input`: the
  // checksums of the input bytes it was computed from (when known). Safe to
  // call from several threads at once when writer_threads() > 1. The caller's
  // buffer is free after the call: a sink may reuse its memory (the file sink
  // packs float32 values there, output.dtype).
  virtual void write_slab(const Slab& slab, const double* buffer, const InputSums& input = {}) = 0;
  // The slab in pieces (SlabPieces), or null where this sink cannot take it
  // so (then write_slab). Safe to call from several threads when
  // writer_threads() > 1, for slabs of different writers.
  virtual std::unique_ptr<SlabPieces> slab_pieces(const Slab&) { return nullptr; }
  // The sink records input checksums: the reader takes them.
  virtual bool wants_input_sums() const { return false; }
  // How many slabs the sink can take at once (one writer thread each): more
  // than one only where the slabs go to separate files (output.layout: split).
  virtual int writer_threads() const { return 1; }
  // memory.staging: none with a sink that takes any piece from any thread
  // (arrays in memory): this many threads share out the pieces of every
  // slab, instead of one thread per slab. 0: one thread per slab.
  virtual int piece_threads() const { return 0; }
  // The order in which to produce the pending slabs (by default as given):
  // a split output interleaves its parts so that concurrent writers meet
  // different files.
  virtual std::vector<int> write_order(const std::vector<int>& pending) const { return pending; }
  // Makes every written slab durable and records it (before a stop).
  virtual void checkpoint() {}
  // This rank is done: everything it wrote is durable and recorded.
  virtual void flush() {}
  // Once every rank has flushed, on every rank: this rank's share of the
  // finishing work that parallelises (output.compression: part f of a split
  // output is compressed by rank f % ranks). Throws where the run left a unit
  // undone, as publish() does.
  virtual void finish_share(int /*rank*/, int /*ranks*/) {}
  // Then, on rank 0 only: the result becomes visible.
  virtual void publish() {}
  // Collective, every rank, once the slabs are done or given up: closes what
  // the ranks share (a parallel HDF5 file), before they agree on the outcome.
  virtual void close_collective() {}
  // After bad input data, on rank 0: an output this run created is removed
  // (nothing in it is worth keeping); a resumed one stays.
  virtual void discard_if_fresh() {}
  // Collective where the sink adds up values (output.mode: checksum): every
  // rank's sums combined with `sum`, then the job's; nullopt for a file.
  virtual std::optional<OutputChecksums> combined_checksums(const RankSums& /*sum*/) { return std::nullopt; }
  // The runs the output records (report/runs.hpp joins them into the job's
  // runs) and this run's number; nullopt where nothing records runs.
  virtual std::optional<RunHistory> run_history() const { return std::nullopt; }
  virtual int run_number() const { return 0; }
  // What this rank's finish_share() and publish() did to store the output
  // compressed (output.compression); all 0 when it compressed nothing.
  virtual CompressStats compression() const { return {}; }
  virtual std::string describe() const = 0;
};

}  // namespace discount
