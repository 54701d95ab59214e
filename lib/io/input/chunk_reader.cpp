#include "io/input/chunk_reader.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/affinity.hpp"
#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "common/knobs.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/hdf5/hdf5_handle.hpp"

namespace discount {

namespace {

using Clock = std::chrono::steady_clock;
std::uint64_t ns(Clock::duration d) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

// Decoded chunks kept for the next slab: at most this many bytes, and at
// most one layer of chunks across the first or the second axis (what a slab
// boundary along either can cut).
constexpr std::uint64_t kCacheBytes = std::uint64_t{16} << 20;
// Smaller chunks stay with HDF5: a lookup and a read per chunk would cost
// more than their decoding.
constexpr std::uint64_t kMinChunkBytes = std::uint64_t{64} << 10;

std::string origin_text(const std::array<std::int64_t, 3>& origin, int rank) {
  std::string text = "[";
  for (int j = 0; j < rank; ++j) text += (j ? ", " : "") + std::to_string(origin[j]);
  return text + "]";
}

void read_fully(int fd, std::uint8_t* to, std::size_t bytes, std::uint64_t at, const std::string& what) {
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, to, bytes, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(what + " failed: " + std::strerror(errno));
    if (n == 0) throw data_error(what + ": the file ends inside a chunk; it is truncated");
    to += n;
    at += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

}  // namespace

unsigned ChunkReader::threads() {
  // Decoding is bound by the cores, not by the storage: every CPU the
  // process may use, at least the I/O threads.
  static const unsigned n = [] {
    if (knobs().io_threads > 0) return static_cast<unsigned>(knobs().io_threads);
    return std::max(io_threads(), static_cast<unsigned>(std::clamp(process_cpu_count(), 1, 64)));
  }();
  return n;
}

std::unique_ptr<ChunkReader> ChunkReader::open(hid_t dataset, hid_t dcpl, int fd, std::string& why) {
  if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
    why = "not chunked";
    return nullptr;
  }
  std::unique_ptr<ChunkReader> r(new ChunkReader);
  r->pipeline_ = dataset_pipeline(dcpl);
  why = codec::unimplemented(r->pipeline_);
  if (why.empty() && H5Pget_external_count(dcpl) > 0) why = "external raw storage";
  if (why.empty()) why = r->take_type(dataset);
  if (why.empty()) why = r->take_shape(dataset, dcpl);
  struct stat st {};
  if (why.empty() && (fd < 0 || ::fstat(fd, &st) != 0)) why = "not a plain POSIX file";
  if (!why.empty()) return nullptr;
  H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
  if (H5Pfill_value_defined(dcpl, &defined) >= 0 && defined != H5D_FILL_VALUE_UNDEFINED)
    H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, &r->fill_);
  r->file_size_ = static_cast<std::uint64_t>(st.st_size);
  r->dataset_ = dataset;
  r->fd_ = fd;
  // Chunks in one layer across either of the first two axes: what a slab
  // boundary along that axis cuts (slabs run along dates or along ids).
  std::array<std::uint64_t, 3> along{};
  for (int j = 0; j < 3; ++j) along[j] = static_cast<std::uint64_t>((r->dims_[j] + r->chunk_[j] - 1) / r->chunk_[j]);
  const std::uint64_t layer = std::max(along[1] * along[2], along[0] * along[2]);
  r->cut_.capacity = static_cast<std::size_t>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(layer, kCacheBytes / r->chunk_bytes_)));
  return r;
}

std::string ChunkReader::take_type(hid_t dataset) {
  h5::Id type = h5::datatype(H5Dget_type(dataset));
  if (H5Tequal(type.get(), H5T_NATIVE_DOUBLE) > 0 && H5T_ORDER_LE == H5Tget_order(H5T_NATIVE_DOUBLE))
    element_size_ = 8;
  else if (H5Tequal(type.get(), H5T_NATIVE_FLOAT) > 0 && H5T_ORDER_LE == H5Tget_order(H5T_NATIVE_FLOAT))
    element_size_ = 4;
  else
    return "its type is converted by HDF5";
  return {};
}

std::string ChunkReader::take_shape(hid_t dataset, hid_t dcpl) {
  const std::vector<hsize_t> dims = h5::dataset_dims(dataset);
  rank_ = static_cast<int>(dims.size());
  if (rank_ < 1 || rank_ > 3) return "rank " + std::to_string(rank_);
  std::vector<hsize_t> chunk(dims.size());
  if (H5Pget_chunk(dcpl, rank_, chunk.data()) != rank_) return "its chunk shape cannot be read";
  // Held as rank 3, leading extents of 1.
  std::uint64_t elements = 1;
  for (int j = 0; j < rank_; ++j) elements *= chunk[j];
  if (elements * element_size_ < kMinChunkBytes) return "chunks under " + std::to_string(kMinChunkBytes >> 10) + " KiB";
  chunk_bytes_ = element_size_;
  const int shift = 3 - rank_;
  for (int j = 0; j < rank_; ++j) {
    dims_[j + shift] = static_cast<std::int64_t>(dims[j]);
    chunk_[j + shift] = static_cast<std::int64_t>(chunk[j]);
    chunk_bytes_ *= chunk[j];
  }
  return {};
}

std::string ChunkReader::describe() const {
  return "parallel chunk reads (" + codec::describe(pipeline_) + ", " + std::to_string(threads()) + " threads)";
}

std::uint64_t ChunkReader::memory_bytes() const {
  // Per thread a stored chunk (at most a little over the raw size) and a
  // decoded one; the codec's two scratch chunks; the cache.
  const std::uint64_t per_thread = 4 * (chunk_bytes_ + chunk_bytes_ / 16 + 4096);
  return threads() * per_thread + cut_.capacity * chunk_bytes_;
}

DecodeStats ChunkReader::stats() const {
  DecodeStats s;
  s.pipeline = codec::describe(pipeline_);
  s.stored_bytes = totals_.stored.load();
  s.raw_bytes = totals_.raw.load();
  s.chunks = totals_.chunks.load();
  s.decode_busy_seconds = static_cast<double>(totals_.decode_ns.load()) * 1e-9;
  s.read_busy_seconds = static_cast<double>(totals_.read_ns.load()) * 1e-9;
  s.locate_busy_seconds = static_cast<double>(totals_.locate_ns.load()) * 1e-9;
  s.threads = s.chunks ? totals_.workers.load() : 0;
  return s;
}

void ChunkReader::add(const Tally& tally, unsigned workers) {
  totals_.chunks += tally.chunks;
  totals_.stored += tally.stored;
  totals_.raw += tally.raw;
  totals_.read_ns += tally.read_ns;
  totals_.decode_ns += tally.decode_ns;
  totals_.locate_ns += tally.locate_ns;
  if (tally.chunks == 0) return;
  unsigned most = totals_.workers.load();
  while (most < workers && !totals_.workers.compare_exchange_weak(most, workers)) {}
}

std::array<std::int64_t, 3> ChunkReader::in_file(const std::array<std::int64_t, 3>& origin) const {
  std::array<std::int64_t, 3> u{0, 0, 0};
  for (int j = 0; j < rank_; ++j) u[j] = origin[j + 3 - rank_];
  return u;
}

void ChunkReader::load(const Chunk& c, Buffers& b, std::uint8_t* into, const std::string& what, Tally& tally) const {
  b.stored.resize(c.stored);
  const auto begin = Clock::now();
  read_fully(fd_, b.stored.data(), b.stored.size(), c.address, what);
  const auto read = Clock::now();
  try {
    codec::decode(pipeline_, c.mask, b.stored.data(), b.stored.size(), into, chunk_bytes_, &b.workspace);
  } catch (const codec::DamagedChunk& e) {
    throw data_error(what + ": the chunk at " + origin_text(in_file(c.origin), rank_) + " (" +
                     std::to_string(c.stored) + " bytes at byte " + std::to_string(c.address) + ") is damaged (" +
                     e.what() + "); running again cannot help: check the file with h5dump");
  }
  tally.read_ns += ns(read - begin);
  tally.decode_ns += ns(Clock::now() - read);
  ++tally.chunks;
  tally.stored += c.stored;
  tally.raw += chunk_bytes_;
}

DecodeSample ChunkReader::sample_rate(const std::string& what, unsigned max_chunks, double max_seconds) {
  DecodeSample sample;
  sample.pipeline = codec::describe(pipeline_);
  sample.threads = threads();
  // Chunks spread evenly over the grid, in its order; never-written ones skipped.
  std::array<std::int64_t, 3> along{};
  std::int64_t grid = 1;
  for (int j = 0; j < 3; ++j) grid *= along[j] = (dims_[j] + chunk_[j] - 1) / chunk_[j];
  const std::int64_t n = std::min<std::int64_t>(std::max(1U, max_chunks), grid);
  std::vector<Chunk> look(static_cast<std::size_t>(n));
  std::vector<std::array<std::int64_t, 3>> origins(look.size());
  for (std::size_t k = 0; k < look.size(); ++k) {
    std::int64_t at = static_cast<std::int64_t>(k) * grid / n;
    for (int j = 2; j >= 0; --j) {
      origins[k][j] = at % along[j] * chunk_[j];
      at /= along[j];
    }
    look[k].origin = in_file(origins[k]);
  }
  locate(look, what);
  Buffers b;
  std::vector<std::uint8_t> decoded(chunk_bytes_);
  Tally tally, warm;
  std::vector<Chunk> taken;
  const auto begin = Clock::now();
  for (std::size_t k = 0; k < look.size(); ++k) {
    Chunk& c = look[k];
    if (c.address == HADDR_UNDEF) continue;
    c.origin = origins[k];
    if (warm.chunks == 0) load(c, b, decoded.data(), what, warm);  // buffers and the codec's scratch made once
    load(c, b, decoded.data(), what, tally);
    taken.push_back(c);
    if (std::chrono::duration<double>(Clock::now() - begin).count() > max_seconds) break;
  }
  sample.chunks = tally.chunks;
  sample.stored_bytes = tally.stored;
  sample.raw_bytes = tally.raw;
  sample.seconds = static_cast<double>(tally.decode_ns) * 1e-9;
  if (!taken.empty()) sample.together_seconds = decode_together(taken, what);
  return sample;
}

double ChunkReader::decode_together(const std::vector<Chunk>& chunks, const std::string& what) {
  // Each thread warms its buffers on the first chunk, then decodes every
  // chunk. A thread that fails (the file changed since the first pass)
  // still checks in, and the figure is then 0: not measured.
  const unsigned n = threads();
  std::atomic<bool> failed{false};
  std::vector<Buffers> buffers(n);
  std::vector<std::vector<std::uint8_t>> decoded(n, std::vector<std::uint8_t>(chunk_bytes_));
  const auto attempt = [&](auto&& body) {
    try {
      body();
    } catch (...) { failed = true; }
  };
  const double seconds = seconds_together(
      n,
      [&](unsigned t) {
        Tally ignored;
        attempt([&] { load(chunks.front(), buffers[t], decoded[t].data(), what, ignored); });
      },
      [&](unsigned t) {
        Tally ignored;
        if (!failed)
          attempt([&] {
            for (const Chunk& c : chunks) load(c, buffers[t], decoded[t].data(), what, ignored);
          });
      });
  return failed ? 0 : seconds;
}

void ChunkReader::locate(std::vector<Chunk>& chunks, const std::string& what) {
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  for (Chunk& c : chunks) locate_one(c, what);
}

void ChunkReader::locate_one(Chunk& c, const std::string& what) const {
  h5::QuietErrors quiet;
  hsize_t offset[3] = {0, 0, 0};
  for (int j = 0; j < rank_; ++j) offset[j] = static_cast<hsize_t>(c.origin[j]);
  if (H5Dget_chunk_info_by_coord(dataset_, offset, &c.mask, &c.address, &c.stored) < 0)
    throw data_error(what + ": the chunk index entry of the chunk at " + origin_text(c.origin, rank_) +
                     " cannot be read (" + h5::error_messages() + "); check the file with h5dump");
  if (c.address == HADDR_UNDEF) return;  // never written: the fill value
  if (c.stored == 0 || c.address >= file_size_ || c.stored > file_size_ - c.address)
    throw data_error(what + ": the chunk at " + origin_text(c.origin, rank_) + " (" + std::to_string(c.stored) +
                     " bytes at byte " + std::to_string(c.address) + ") lies outside the file of " +
                     std::to_string(file_size_) + " bytes; the file is truncated or damaged");
}

std::unique_ptr<ChunkReader::Buffers> ChunkReader::take_buffers() {
  std::unique_ptr<Buffers> b = buffers_.take();
  return b ? std::move(b) : std::make_unique<Buffers>();
}

void ChunkReader::give_buffers(std::unique_ptr<Buffers> buffers) { buffers_.give(std::move(buffers)); }

bool ChunkReader::lands_whole(const Chunk& c, const std::array<std::int64_t, 3>& start,
                              const std::array<std::int64_t, 3>& count) const {
  if (element_size_ != 8) return false;
  for (int j = 0; j < 3; ++j)
    if (c.origin[j] < start[j] || c.origin[j] + chunk_[j] > std::min(start[j] + count[j], dims_[j])) return false;
  // Whole in the box: one run when its rows meet, that is when it spans the
  // box's last axis and, unless it is one row thick, the middle one too.
  if (chunk_[2] != count[2]) return chunk_[0] == 1 && chunk_[1] == 1;
  return chunk_[1] == count[1] || chunk_[0] == 1;
}

ChunkReader::Decoded ChunkReader::cached(const std::array<std::int64_t, 3>& origin) {
  std::lock_guard<std::mutex> lock(cut_.mutex);
  const auto it = cut_.decoded.find(origin);
  return it == cut_.decoded.end() ? nullptr : it->second;
}

void ChunkReader::keep(const std::array<std::int64_t, 3>& origin, Decoded decoded) {
  std::lock_guard<std::mutex> lock(cut_.mutex);
  if (!cut_.decoded.emplace(origin, std::move(decoded)).second) return;
  cut_.order.push_back(origin);
  while (cut_.order.size() > cut_.capacity) {
    cut_.decoded.erase(cut_.order.front());
    cut_.order.pop_front();
  }
}

ChunkReader::Overlap ChunkReader::overlap(const Chunk& chunk, const std::array<std::int64_t, 3>& start,
                                          const std::array<std::int64_t, 3>& count) const {
  Overlap o;
  for (int j = 0; j < 3; ++j) {
    o.lo[j] = std::max(chunk.origin[j], start[j]);
    o.hi[j] = std::min({chunk.origin[j] + chunk_[j], start[j] + count[j], dims_[j]});
  }
  return o;
}

void ChunkReader::place(const Chunk& chunk, const std::uint8_t* decoded, const std::array<std::int64_t, 3>& start,
                        const std::array<std::int64_t, 3>& count, double* buffer) const {
  const auto [lo, hi] = overlap(chunk, start, count);
  const std::int64_t run = hi[2] - lo[2];
  for (std::int64_t a = lo[0]; a < hi[0]; ++a)
    for (std::int64_t b = lo[1]; b < hi[1]; ++b) {
      const std::int64_t from =
          ((a - chunk.origin[0]) * chunk_[1] + (b - chunk.origin[1])) * chunk_[2] + (lo[2] - chunk.origin[2]);
      double* to = buffer + ((a - start[0]) * count[1] + (b - start[1])) * count[2] + (lo[2] - start[2]);
      if (element_size_ == 8) {
        std::memcpy(to, decoded + from * 8, static_cast<std::size_t>(run) * 8);
      } else {
        const auto* f = reinterpret_cast<const float*>(decoded) + from;
        for (std::int64_t k = 0; k < run; ++k) to[k] = static_cast<double>(f[k]);
      }
    }
}

void ChunkReader::fill(const Chunk& chunk, const std::array<std::int64_t, 3>& start,
                       const std::array<std::int64_t, 3>& count, double* buffer) const {
  const auto [lo, hi] = overlap(chunk, start, count);
  for (std::int64_t a = lo[0]; a < hi[0]; ++a)
    for (std::int64_t b = lo[1]; b < hi[1]; ++b) {
      double* to = buffer + ((a - start[0]) * count[1] + (b - start[1])) * count[2] + (lo[2] - start[2]);
      std::fill(to, to + (hi[2] - lo[2]), fill_);
    }
}

void ChunkReader::find(Chunk& c, const std::string& what, Tally& tally) const {
  const auto begin = Clock::now();
  Chunk f;
  f.origin = in_file(c.origin);
  {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    locate_one(f, what);
  }
  c.address = f.address;
  c.stored = f.stored;
  c.mask = f.mask;
  tally.locate_ns += ns(Clock::now() - begin);
}

std::array<std::int64_t, 3> ChunkReader::as_rank3(const std::array<std::int64_t, 3>& box, std::int64_t pad) const {
  std::array<std::int64_t, 3> u{pad, pad, pad};
  for (int j = 0; j < rank_; ++j) u[j + 3 - rank_] = box[j];
  return u;
}

void ChunkReader::read_chunk(Chunk& c, const Decoded& hit, const std::array<std::int64_t, 3>& start,
                             const std::array<std::int64_t, 3>& count, double* buffer, Buffers& mine,
                             const std::string& what, Tally& tally) {
  if (hit) {
    place(c, hit->data(), start, count, buffer);
    return;
  }
  find(c, what, tally);
  if (c.address == HADDR_UNDEF) {
    fill(c, start, count, buffer);
    return;
  }
  // A chunk the box cuts is decoded into a buffer of its own, kept for the
  // next slab; others into this thread's buffer.
  bool cut = false;
  for (int j = 0; j < 3; ++j)
    cut |= c.origin[j] < start[j] || std::min(c.origin[j] + chunk_[j], dims_[j]) > start[j] + count[j];
  auto own = cut ? std::make_shared<std::vector<std::uint8_t>>(chunk_bytes_) : nullptr;
  // A whole chunk that is one run of the box decodes in place.
  const bool in_place = !own && lands_whole(c, start, count);
  if (!own && !in_place) mine.decoded.resize(chunk_bytes_);
  std::uint8_t* into = own        ? own->data()
                       : in_place ? reinterpret_cast<std::uint8_t*>(buffer + offset_in_box(c, start, count))
                                  : mine.decoded.data();
  load(c, mine, into, what, tally);
  if (!in_place) place(c, into, start, count, buffer);
  if (own) keep(c.origin, std::move(own));
}

std::int64_t ChunkReader::offset_in_box(const Chunk& c, const std::array<std::int64_t, 3>& start,
                                        const std::array<std::int64_t, 3>& count) {
  return ((c.origin[0] - start[0]) * count[1] + (c.origin[1] - start[1])) * count[2] + (c.origin[2] - start[2]);
}

bool ChunkReader::read(const std::array<std::int64_t, 3>& start_in, const std::array<std::int64_t, 3>& count_in,
                       double* buffer, const std::string& what, const Visit& visit) {
  // Rank 2 (or 1) as rank 3 with leading extents of 1.
  const std::array<std::int64_t, 3> start = as_rank3(start_in, 0), count = as_rank3(count_in, 1);
  if (count[0] <= 0 || count[1] <= 0 || count[2] <= 0) return false;
  // The chunks the box touches, in file order.
  std::vector<Chunk> chunks;
  for (std::int64_t a = start[0] / chunk_[0] * chunk_[0]; a < start[0] + count[0]; a += chunk_[0])
    for (std::int64_t b = start[1] / chunk_[1] * chunk_[1]; b < start[1] + count[1]; b += chunk_[1])
      for (std::int64_t c = start[2] / chunk_[2] * chunk_[2]; c < start[2] + count[2]; c += chunk_[2]) {
        Chunk ch;
        ch.origin = {a, b, c};
        chunks.push_back(ch);
      }
  bool all_whole = true;
  for (const Chunk& c : chunks) all_whole = all_whole && lands_whole(c, start, count);
  // Cached chunks are taken now (a later slab's read may evict them); the
  // others are located by the decoding threads, one at a time under HDF5's
  // lock, so that decoding starts with the first chunk found.
  std::vector<Decoded> hits(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) hits[i] = cached(chunks[i].origin);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const unsigned workers =
      static_cast<unsigned>(std::min<std::size_t>(threads(), std::max<std::size_t>(1, chunks.size())));
  run_on_threads(workers, [&](unsigned) {
    std::unique_ptr<Buffers> mine = take_buffers();
    Tally tally;
    try {
      for (std::size_t i = next++; i < chunks.size() && !failed; i = next++) {
        read_chunk(chunks[i], hits[i], start, count, buffer, *mine, what, tally);
        // Every chunk's elements are visited, however they arrived (the
        // visitor may be the fused multiply).
        if (visit && all_whole)
          visit(offset_in_box(chunks[i], start, count), static_cast<std::int64_t>(chunk_bytes_ / 8));
      }
    } catch (...) {
      failed = true;
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    give_buffers(std::move(mine));
    add(tally, workers);
  });
  if (error) std::rethrow_exception(error);
  return visit && all_whole;
}

bool ChunkReader::walks_chunks_once() const { return chunk_[0] == 1 && (chunk_[2] >= dims_[2] || chunk_[1] == 1); }

ChunkReader::RangeSlot& ChunkReader::range_slot(unsigned& threads) {
  std::lock_guard<std::mutex> lock(slots_.mutex);
  std::unique_ptr<RangeSlot>& slot = slots_.by_thread[std::this_thread::get_id()];
  if (!slot) slot = std::make_unique<RangeSlot>();
  threads = static_cast<unsigned>(slots_.by_thread.size());
  return *slot;
}

void ChunkReader::hold(RangeSlot& slot, const std::array<std::int64_t, 3>& origin, const std::string& what,
                       Tally& tally) {
  if (slot.origin == origin) return;
  slot.origin = {-1, -1, -1};  // nothing held until the chunk is decoded whole
  Chunk c;
  c.origin = origin;
  find(c, what, tally);
  slot.absent = c.address == HADDR_UNDEF;
  if (!slot.absent) {
    slot.decoded.resize(chunk_bytes_);
    load(c, *slot.buffers, slot.decoded.data(), what, tally);
  }
  slot.origin = origin;
}

void ChunkReader::copy_out(const RangeSlot& slot, std::int64_t from, std::int64_t n, double* to) const {
  if (slot.absent) {
    std::fill(to, to + n, fill_);
  } else if (element_size_ == 8) {
    std::memcpy(to, slot.decoded.data() + from * 8, static_cast<std::size_t>(n) * 8);
  } else {
    const auto* f = reinterpret_cast<const float*>(slot.decoded.data()) + from;
    for (std::int64_t k = 0; k < n; ++k) to[k] = static_cast<double>(f[k]);
  }
}

void ChunkReader::read_range(const std::array<std::int64_t, 3>& start_in, const std::array<std::int64_t, 3>& count_in,
                             std::int64_t first, std::int64_t n, double* buffer, const std::string& what) {
  const std::array<std::int64_t, 3> start = as_rank3(start_in, 0), count = as_rank3(count_in, 1);
  unsigned workers = 0;  // the threads that have read ranges so far
  RangeSlot& slot = range_slot(workers);
  Tally tally;
  const std::int64_t row = count[2], plane = count[1] * count[2], end = first + n;
  // Runs of the range, each inside one chunk: along the last axis to the
  // row's or the chunk's end, or, where a chunk spans whole rows of the box
  // laid out alike, over as many rows as lie in that chunk.
  for (std::int64_t e = first; e < end;) {
    const std::array<std::int64_t, 3> at{start[0] + e / plane, start[1] + e / row % count[1], start[2] + e % row};
    std::array<std::int64_t, 3> origin{};
    for (int j = 0; j < 3; ++j) origin[j] = at[j] / chunk_[j] * chunk_[j];
    hold(slot, origin, what, tally);
    std::int64_t len = std::min({start[2] + count[2] - at[2], origin[2] + chunk_[2] - at[2], end - e});
    if (at[2] == start[2] && chunk_[2] == count[2] && origin[2] == start[2] && len == row) {
      const std::int64_t rows = std::min({origin[1] + chunk_[1] - at[1], start[1] + count[1] - at[1], (end - e) / row});
      len = rows * row;
    }
    const std::int64_t from = ((at[0] - origin[0]) * chunk_[1] + (at[1] - origin[1])) * chunk_[2] + (at[2] - origin[2]);
    copy_out(slot, from, len, buffer + (e - first));
    e += len;
  }
  add(tally, workers);
}

}  // namespace discount
