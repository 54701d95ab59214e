// Where slabs come from: an HDF5 file (fast positional reads for contiguous
// float64 datasets, HDF5 hyperslab reads with type conversion otherwise) or
// the synthetic formula. Buffers are packed in the file's axis order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/host_parallel.hpp"
#include "config/config.hpp"

namespace discount {

// Bytes per element as stored in the input file (8 for computed values).
struct StoredBytes {
  std::uint64_t discount = sizeof(double), multiplier = sizeof(double);
};

// The discount dataset's chunks, when the app decodes them on its own
// threads (io/input/chunk_reader.hpp): their extent along dates and ids, their
// decoded bytes, the threads that decode them. All 0: not decoded here.
struct ChunkGrid {
  std::int64_t dates = 0, ids = 0;
  std::uint64_t bytes = 0;
  unsigned threads = 0;
};

// What decoding the input's compressed chunks on the app's own threads
// took (io/input/chunk_reader.hpp), summed over the datasets read that way. All 0
// (pipeline empty): no dataset takes that path.
struct DecodeStats {
  std::string pipeline;            // codec::describe's "shuffle + deflate 4"; two differing: "a; b"
  std::uint64_t stored_bytes = 0;  // read from the file, compressed
  std::uint64_t raw_bytes = 0;     // decoded (whole chunks, edge chunks included)
  std::uint64_t chunks = 0;        // chunks decoded (those the cache held are not)
  double decode_busy_seconds = 0;  // thread-seconds in the codec
  double read_busy_seconds = 0;    // thread-seconds in pread
  double locate_busy_seconds = 0;  // thread-seconds finding chunks in HDF5's index (its lock's waits included)
  unsigned threads = 0;            // the most threads that decoded at once
  DecodeStats& operator+=(const DecodeStats& other) {
    if (pipeline.empty())
      pipeline = other.pipeline;
    else if (!other.pipeline.empty() && other.pipeline != pipeline)
      pipeline += "; " + other.pipeline;
    stored_bytes += other.stored_bytes;
    raw_bytes += other.raw_bytes;
    chunks += other.chunks;
    decode_busy_seconds += other.decode_busy_seconds;
    read_busy_seconds += other.read_busy_seconds;
    locate_busy_seconds += other.locate_busy_seconds;
    threads = std::max(threads, other.threads);
    return *this;
  }
};

// One thread's decoding rate on a sample of the discount's own chunks
// (plan), and the same chunks decoded by every decoding thread at once, each
// on its own copy: what the cores reach together (clock and memory shared),
// which may be less than one thread's rate times the threads. chunks 0: not
// measured (the discount is not decoded here).
struct DecodeSample {
  std::string pipeline;
  std::uint64_t chunks = 0, stored_bytes = 0, raw_bytes = 0;
  double seconds = 0;           // in the codec, on one thread
  unsigned threads = 0;         // the threads a run decodes on
  double together_seconds = 0;  // wall time of every thread decoding the sample at once
  double thread_rate() const { return seconds > 0 ? static_cast<double>(raw_bytes) / seconds : 0.0; }
  double together_rate() const {
    return together_seconds > 0 ? static_cast<double>(raw_bytes) * threads / together_seconds : 0.0;
  }
};

struct InputShape {
  std::int64_t dates = 0, ids = 0, nums = 0;  // full extents in the source
};

// One input dataset as the JSON report shows it (report/report.hpp).
struct DatasetFacts {
  std::string role;                 // "multiplier" | "discount"
  std::string name;                 // its path in the file; "(synthetic)" for input.synthetic
  std::string file;                 // the file holding it (an external link's target); empty: none
  std::vector<std::int64_t> shape;  // in the file's order
  std::vector<std::string> axes;    // the axis of each dimension of shape
  std::string dtype;                // as stored: "float64", "float32", "int32", "float64 big-endian", ...
  std::string read_path;            // "positional reads" | "HDF5 reads (why)" | "computed"
};

// File-order box of the discount slab (dates x ids x all nums), absolute.
struct FileBox {
  std::array<std::int64_t, 3> dims, start, count;
};
FileBox discount_box(const InputShape& shape, const std::array<Axis, 3>& axes, Range dates, Range ids);

class InputSource {
 public:
  virtual ~InputSource() = default;
  const InputShape& shape() const { return shape_; }
  const std::array<Axis, 3>& axes() const { return axes_; }
  // How multBy is stored: {id, num} (the default) or {num, id}; read_multiplier
  // returns [ids x nums] rows either way.
  const std::array<Axis, 2>& multiplier_axes() const { return multiplier_axes_; }
  // Ranges are absolute in the source; every num is read.
  virtual void read_discount(Range dates, Range ids, double* buffer) = 0;
  // Elements [first, first + count) of a discount buffer that have arrived.
  using PieceVisitor = std::function<void(std::int64_t first, std::int64_t count)>;
  // read_discount, handing every element of the buffer to `visit` exactly
  // once (several threads may visit at once). Positional reads visit each
  // piece as it lands, while it is still in cache, so a scan or a checksum
  // costs no pass over memory of its own; other sources visit the buffer in
  // parallel pieces after reading it.
  // Inline, like every other member with a body here: a virtual function
  // defined in input.cpp would make that file the only home of the class's
  // type information, which the sanitizers' checks need in code that does
  // not link io (resolve, the unit tests' fake sources).
  virtual void read_discount_visited(Range dates, Range ids, double* buffer, const PieceVisitor& visit) {
    read_discount(dates, ids, buffer);
    visit_in_pieces(dates.size() * ids.size() * shape_.nums, visit);
  }
  // read_discount_visited hands each piece over right after it lands, while
  // it is in cache (positional reads, arrays in memory); false: the pieces
  // are visited after the whole read, a pass of their own. compute.kernel:
  // auto takes fused only when true.
  virtual bool visits_as_read() const { return false; }
  // memory.staging: none: elements [first, first + count) of the buffer
  // read_discount would fill for (dates, ids), read into `buffer` (which
  // holds just those) on the calling thread. Only where reads_ranges().
  virtual bool reads_ranges() const { return false; }
  virtual void read_discount_range(Range, Range, std::int64_t, std::int64_t, double*) {
    throw std::logic_error("this input does not read ranges of a slab");
  }
  // The same elements where they lie, when they are float64, one contiguous
  // run, and page-locked for the GPU's copy engines (a NumPy array pinned in
  // place): a GPU copies them up from there, with no read into a buffer.
  // Null otherwise.
  virtual const double* discount_in_place(Range, Range, std::int64_t, std::int64_t) const { return nullptr; }
  virtual void read_multiplier(Range ids, double* buffer) = 0;
  virtual std::string describe() const = 0;
  // Stable text that changes when the inputs' content changes (resume
  // fingerprint); the same for a byte-identical copy at another path.
  virtual std::string identity() const = 0;
  // "device:inode:mtime" of the input file (empty: none). The same file with
  // another time stamp was changed in place: a resume is refused then even
  // when the sampled content in identity() still matches.
  virtual std::string file_stat() const { return {}; }
  // Values may be NaN/Inf and need scanning under nonfinite: error.
  virtual bool may_hold_nonfinite() const { return true; }
  // Host memory the reads take besides the slab buffers (HDF5's chunk
  // caches, a decompressed chunk, the type conversion buffer, the per-chunk
  // bookkeeping of one read): the plan counts it inside memory.host_budget.
  virtual std::uint64_t read_memory_bytes() const { return 0; }
  // The inputs' element sizes on disk: the report counts bytes as stored.
  virtual StoredBytes stored_bytes() const { return {}; }
  // One line per dataset whose chunk shape will make reads slow, with the
  // h5repack command that fixes it (empty: none).
  virtual std::string read_advice() const { return {}; }
  // The discount's chunk grid when the app decodes its chunks (the plan
  // aligns slabs to it and makes them hold chunks for every thread).
  virtual ChunkGrid chunk_grid() const { return {}; }
  // The decoding of the datasets read by parallel chunk reads so far, both
  // datasets summed; zero when none is.
  virtual DecodeStats decode_stats() const { return {}; }
  // A few of the discount's chunks decoded on the calling thread, for the
  // plan's decompression line; zero chunks when it is not read that way.
  virtual DecodeSample sample_decoding() { return {}; }
  // The multiplier's and the discount's facts, for the JSON report.
  virtual std::vector<DatasetFacts> datasets() const { return {}; }
  // The HDF5 file that holds both datasets, for plain HDF5 reads (verify):
  // input.file, or the virtual dataset an input.file list is read through
  // (valid while this source lives). Empty: synthetic.
  virtual std::string hdf5_file() const { return {}; }

 protected:
  // visit(first, count) over [0, n) in pieces of kCachePieceBytes, spread over the I/O threads.
  static void visit_in_pieces(std::int64_t n, const PieceVisitor& visit) {
    constexpr auto kPiece = static_cast<std::int64_t>(kCachePieceBytes / sizeof(double));
    host_parallel(n, io_threads(), [&](std::int64_t b, std::int64_t e, unsigned) {
      for (std::int64_t s = b; s < e; s += kPiece) visit(s, std::min(e, s + kPiece) - s);
    });
  }

  InputShape shape_;
  std::array<Axis, 3> axes_{Axis::date, Axis::id, Axis::num};
  std::array<Axis, 2> multiplier_axes_{Axis::id, Axis::num};
};

// input.synthetic: the documented formula (io/input/synthetic.hpp), no file.
std::unique_ptr<InputSource> open_synthetic_input(const SyntheticSource& source);
// One HDF5 file (input.file, ignoring input.files): opens and validates
// (existence, HDF5-ness, datasets, rank, dtype, shapes, sub-ranges). Throws
// discount::Error with the documented codes. A job's input, a list of files
// included, is opened by io/lists' open_input, built on these two.
std::unique_ptr<InputSource> open_hdf5_input(const InputConfig& config);

}  // namespace discount
