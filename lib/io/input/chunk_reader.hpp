// Parallel reads of a chunked, filtered dataset: the chunks a box touches
// are located through HDF5's chunk index (under its lock, a B-tree lookup
// each), then read with positional reads and decoded by lib/codec on every
// core at once, each straight into its place in the packed box. HDF5 1.10
// runs its filters on one thread under a global lock; this takes a deflate +
// shuffle input from one core's inflate rate to all of them.
//
// A chunk the box cuts (the budget cut slabs off the chunk grid) is kept,
// decoded, in a cache for the next slab, so no chunk is decoded twice while
// the slabs walk the grid in order, as long as one layer of chunks across
// the slabs' axis fits in the cache's 16 MiB (beyond that the oldest go and
// are decoded again). A chunk that does not decode gives data_error (65)
// naming the dataset and the chunk.
#pragma once

#include <hdf5.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "codec/codec.hpp"
#include "common/free_list.hpp"
#include "io/input/input.hpp"

namespace discount {

class ChunkReader {
 public:
  // A reader for `dataset` when its chunks can be read and decoded here:
  // chunked, every filter implemented by lib/codec, stored as little-endian
  // float64 or float32, in a plain POSIX file `fd` (a duplicate of HDF5's).
  // Null otherwise, with `why` saying what keeps it on HDF5's path.
  static std::unique_ptr<ChunkReader> open(hid_t dataset, hid_t dcpl, int fd, std::string& why);

  // Reads the box at `start` of `count` (rank 2 or 3; unused trailing
  // entries 1) into `buffer`, packed, as float64. `what`: "reading
  // 'discount' from in.h5", for errors. Thread-safe.
  // With `visit`, when every chunk lands whole as one run of the box, each
  // element is handed to visit(first, count) once (offsets in the packed
  // buffer), right after its chunk is decoded, on the decoding thread, while
  // it is in cache; then read returns true. False: nothing was visited (the
  // caller visits the buffer after the read).
  using Visit = std::function<void(std::int64_t first, std::int64_t count)>;
  bool read(const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, double* buffer,
            const std::string& what, const Visit& visit = {});

  // memory.staging: none's pieces: elements [first, first + n) of the packed
  // box read() would fill, decoded on the calling thread into `buffer`. Each
  // thread keeps the last chunk it decoded, so the pieces a thread takes in
  // turn decode each chunk once, where walks_chunks_once(). Thread-safe.
  void read_range(const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                  std::int64_t first, std::int64_t n, double* buffer, const std::string& what);
  // The packed order of any box meets each chunk in one stretch: chunks one
  // element thick along the first axis that span the last one, or are one
  // row (a (1, 50000, 5) chunk of [date, id, num]).
  bool walks_chunks_once() const;

  // "parallel chunk reads (shuffle + deflate 4, 16 threads)"
  std::string describe() const;
  const codec::Pipeline& pipeline() const { return pipeline_; }
  // Host memory the reads take: per thread a stored and a decoded chunk,
  // and the cache.
  std::uint64_t memory_bytes() const;
  // What the reads decoded so far (the report's decompression object).
  DecodeStats stats() const;
  // Up to `max_chunks` stored chunks spread over the dataset, read and
  // decoded on the calling thread through the reads' own code, stopping
  // after `max_seconds`: one thread's decoding rate, for the plan. `what`
  // as for read. Adds nothing to stats().
  DecodeSample sample_rate(const std::string& what, unsigned max_chunks = 8, double max_seconds = 0.3);
  static unsigned threads();

 private:
  struct Chunk {
    std::array<std::int64_t, 3> origin{};
    haddr_t address = HADDR_UNDEF;
    hsize_t stored = 0;
    unsigned mask = 0;
  };
  using Decoded = std::shared_ptr<const std::vector<std::uint8_t>>;
  // One decoding thread's buffers, kept from read to read (their pages
  // touched once).
  struct Buffers {
    std::vector<std::uint8_t> stored, decoded;
    codec::Workspace workspace;
  };
  // One thread's figures for one read, added to the reader's at its end.
  struct Tally {
    std::uint64_t chunks = 0, stored = 0, raw = 0, read_ns = 0, decode_ns = 0, locate_ns = 0;
  };
  std::unique_ptr<Buffers> take_buffers();
  void give_buffers(std::unique_ptr<Buffers> buffers);
  // The chunk, fully inside the box, is one run of the packed buffer.
  bool lands_whole(const Chunk& chunk, const std::array<std::int64_t, 3>& start,
                   const std::array<std::int64_t, 3>& count) const;

  ChunkReader() = default;
  // open()'s checks: "" when taken, else why the dataset is not read here.
  std::string take_type(hid_t dataset);
  std::string take_shape(hid_t dataset, hid_t dcpl);
  void locate(std::vector<Chunk>& chunks, const std::string& what);
  // One chunk's address, stored size and filter mask, from its origin in the
  // file's rank (in_file); the caller holds HDF5's lock.
  void locate_one(Chunk& c, const std::string& what) const;
  // locate_one for a chunk of rank-3 origin, under HDF5's lock, timed.
  void find(Chunk& c, const std::string& what, Tally& tally) const;
  // Wall seconds of every decoding thread decoding all of `chunks` at once
  // (located ones), each into buffers of its own (sample_rate).
  double decode_together(const std::vector<Chunk>& chunks, const std::string& what);
  // A rank-3 origin as HDF5 takes it (rank_ entries).
  std::array<std::int64_t, 3> in_file(const std::array<std::int64_t, 3>& origin) const;
  // Reads the located chunk `c` into `b.stored` and decodes it into `into`
  // (chunk_bytes_), timing each part in `tally`.
  void load(const Chunk& c, Buffers& b, std::uint8_t* into, const std::string& what, Tally& tally) const;
  void add(const Tally& tally, unsigned workers);
  // The part of `chunk` inside the box (and the dataset): [lo, hi) per axis.
  struct Overlap {
    std::array<std::int64_t, 3> lo{}, hi{};
  };
  Overlap overlap(const Chunk& chunk, const std::array<std::int64_t, 3>& start,
                  const std::array<std::int64_t, 3>& count) const;
  void place(const Chunk& chunk, const std::uint8_t* decoded, const std::array<std::int64_t, 3>& start,
             const std::array<std::int64_t, 3>& count, double* buffer) const;
  void fill(const Chunk& chunk, const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
            double* buffer) const;
  // read_range's state on one thread: its buffers and the last chunk it
  // decoded (or found never written).
  struct RangeSlot {
    std::unique_ptr<Buffers> buffers = std::make_unique<Buffers>();
    std::vector<std::uint8_t> decoded;
    std::array<std::int64_t, 3> origin{-1, -1, -1};
    bool absent = false;  // never written: the fill value
  };
  // The calling thread's slot; `threads`: how many threads have one.
  RangeSlot& range_slot(unsigned& threads);
  // Makes `slot` hold the chunk at `origin` (rank 3), decoding it unless it holds it already.
  void hold(RangeSlot& slot, const std::array<std::int64_t, 3>& origin, const std::string& what, Tally& tally);
  // Copies `n` elements of the held chunk from element `from` (float32 widened).
  void copy_out(const RangeSlot& slot, std::int64_t from, std::int64_t n, double* to) const;
  // A box of the dataset's rank as rank 3: leading entries `pad`.
  std::array<std::int64_t, 3> as_rank3(const std::array<std::int64_t, 3>& box, std::int64_t pad) const;
  // Where chunk `c`'s origin lies in the packed box.
  static std::int64_t offset_in_box(const Chunk& c, const std::array<std::int64_t, 3>& start,
                                    const std::array<std::int64_t, 3>& count);
  // read()'s work for one chunk: from the cache (`hit`), the fill value, or
  // located, read and decoded into its place in the box.
  void read_chunk(Chunk& c, const Decoded& hit, const std::array<std::int64_t, 3>& start,
                  const std::array<std::int64_t, 3>& count, double* buffer, Buffers& mine, const std::string& what,
                  Tally& tally);
  Decoded cached(const std::array<std::int64_t, 3>& origin);
  void keep(const std::array<std::int64_t, 3>& origin, Decoded decoded);

  hid_t dataset_ = -1;  // owned by the DatasetInfo that owns this reader
  int fd_ = -1;
  std::uint64_t file_size_ = 0;
  int rank_ = 3;
  std::array<std::int64_t, 3> dims_{1, 1, 1}, chunk_{1, 1, 1};
  std::size_t element_size_ = 8;
  std::size_t chunk_bytes_ = 0;
  double fill_ = 0;
  codec::Pipeline pipeline_;

  // The decoding threads' buffers, kept from read to read.
  FreeList<std::unique_ptr<Buffers>> buffers_;
  // read_range's state, one slot per thread that called it.
  struct RangeSlots {
    std::mutex mutex;
    std::map<std::thread::id, std::unique_ptr<RangeSlot>> by_thread;
  } slots_;
  // Decoded chunks a box cut, kept for the next slab.
  struct CutChunks {
    std::mutex mutex;
    std::map<std::array<std::int64_t, 3>, Decoded> decoded;
    std::list<std::array<std::int64_t, 3>> order;  // oldest first
    std::size_t capacity = 0;                      // chunks
  } cut_;

  // Every read's tallies added up (stats()).
  struct Totals {
    std::atomic<std::uint64_t> chunks{0}, stored{0}, raw{0}, read_ns{0}, decode_ns{0}, locate_ns{0};
    std::atomic<unsigned> workers{0};  // the most threads one read decoded on
  } totals_;
};

}  // namespace discount
