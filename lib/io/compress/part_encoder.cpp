#include "io/compress/part_encoder.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "codec/codec.hpp"
#include "common/affinity.hpp"
#include "common/error.hpp"
#include "common/free_list.hpp"
#include "common/host_parallel.hpp"
#include "io/hdf5/deferred_driver.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/input/chunk_reader.hpp"
#include "io/records/output_parts.hpp"
#include "io/records/part_compress.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

namespace {

using Clock = std::chrono::steady_clock;
using Shape = std::array<std::int64_t, 3>;

std::uint64_t elapsed_ns(Clock::time_point since) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count());
}

hsize_t to_h(std::int64_t v) { return static_cast<hsize_t>(v); }

// A contiguous part, open and mapped read-only, its values at `offset`.
// Runs of values long enough are read with pread into the caller's buffer
// (no page faults in this process: on tmpfs the mapped copy of a 2 MiB chunk
// took three times its pread); short runs are copied from the map.
class PartSource {
 public:
  PartSource(const std::string& path, std::uint64_t offset, const std::string& what)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), offset_(offset), what_(what) {
    struct stat st {};
    if (fd_.get() < 0 || ::fstat(fd_.get(), &st) != 0) throw io_error(what + ": " + std::strerror(errno));
    size_ = static_cast<std::size_t>(st.st_size);
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_.get(), 0);
    if (map_ == MAP_FAILED) throw io_error(what + ": cannot map it: " + std::strerror(errno));
  }
  ~PartSource() { ::munmap(map_, size_); }
  PartSource(const PartSource&) = delete;
  PartSource& operator=(const PartSource&) = delete;
  // `bytes` from `at` bytes into the values, into `out`.
  void copy(std::uint64_t at, std::size_t bytes, std::uint8_t* out) const {
    if (bytes < kPreadRun) {
      std::memcpy(out, static_cast<const std::uint8_t*>(map_) + offset_ + at, bytes);
      return;
    }
    pread_runs_here(fd_.get(), offset_, {Run{static_cast<std::int64_t>(at), static_cast<std::int64_t>(bytes)}}, out, 1,
                    what_);
  }

 private:
  static constexpr std::size_t kPreadRun = std::size_t{64} << 10;
  UniqueFd fd_;
  std::uint64_t offset_;
  std::string what_;
  void* map_ = MAP_FAILED;
  std::size_t size_ = 0;
};

// One part on its way: the mapped source, the chunked `.z.tmp` and its writer.
struct PartJob {
  std::string path, tmp, what;
  Shape dims{}, chunk{};
  std::size_t chunk_bytes = 0;
  codec::Pipeline pipeline;
  std::unique_ptr<PartSource> source;
  std::unique_ptr<h5::DeferredWrites> writes;  // null: HDF5's own writes
  h5::Id file, dataset;
  std::uint64_t raw_bytes = 0;
  // Progress, under PartEncoder's mutex. Rows: the chunks' places along the
  // unit axis, row r covering units [r c, (r + 1) c) of the part.
  struct Progress {
    std::int64_t row_units = 1;                  // c: the chunk's extent along the unit axis
    std::vector<std::uint8_t> unit_written;      // per unit of the part
    std::vector<std::int64_t> row_left;          // per row: units not yet written
    std::vector<std::vector<std::size_t>> rows;  // per row: its chunks (indices into chunks_)
    std::size_t chunks = 0, stored = 0;          // chunks in all, chunks HDF5 has taken
    bool durable = false;
  } progress;
  enum class Stage { open, finishing, renamed } stage = Stage::open;
};

struct ChunkRef {
  std::size_t part;
  Shape origin;
};

struct Encoded {
  std::size_t chunk;
  unsigned mask;
  std::vector<std::uint8_t> bytes;
};

// ": no space left on device" when HDF5's write or the part's writer ran out of space.
std::string no_space(const PartJob& p) {
  return errno == ENOSPC || (p.writes && p.writes->error_number() == ENOSPC) ? ": no space left on device" : "";
}

// Creates the part's chunked dataset in `<part>.z.tmp`, declaring its filters.
void create_tmp(PartJob& p, OutputType dtype) {
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  h5::QuietErrors quiet;
  h5::Id fapl = h5::plist(p.writes ? p.writes->file_access() : H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl) throw io_error(p.what + ": HDF5 refused the file driver (" + h5::error_messages() + ")");
  p.file = h5::file(H5Fcreate(p.tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  if (!p.file) throw io_error(p.what + ": cannot create '" + p.tmp + "': " + std::strerror(errno));
  h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
  const hsize_t hchunk[3] = {to_h(p.chunk[0]), to_h(p.chunk[1]), to_h(p.chunk[2])};
  h5::check(H5Pset_chunk(dcpl.get(), 3, hchunk), "H5Pset_chunk");
  h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  for (const codec::Filter& f : p.pipeline)
    if (H5Pset_filter(dcpl.get(), static_cast<H5Z_filter_t>(f.id), f.flags, f.values.size(), f.values.data()) < 0)
      throw io_error(p.what + ": HDF5 refused the filter " + codec::filter_name(f.id) + " (" + h5::error_messages() +
                     ")");
  const hsize_t hdims[3] = {to_h(p.dims[0]), to_h(p.dims[1]), to_h(p.dims[2])};
  h5::Id space = h5::dataspace(H5Screate_simple(3, hdims, nullptr));
  p.dataset = h5::dataset(H5Dcreate2(p.file.get(), kPartDataset, stored_hdf5_type(dtype), space.get(), H5P_DEFAULT,
                                     dcpl.get(), H5P_DEFAULT));
  if (!p.dataset) throw io_error(p.what + ": HDF5 refused the dataset (" + h5::error_messages() + ")");
}

}  // namespace

// The encoder behind PartStream and compress_parts(): the parts' chunks,
// queued as their units are written; encoding threads; one HDF5 thread that
// stores them and finishes each part once whole and durable.
class PartEncoder {
 public:
  PartEncoder(const std::vector<PartToCompress>& parts, int unit_axis, OutputType dtype, const CompressionConfig& z,
              std::function<void(std::size_t)> before_rename);
  ~PartEncoder();
  void written(std::size_t i, std::int64_t begin, std::int64_t end);
  void durable(std::size_t i);
  CompressStats finish();

 private:
  void encode_chunks();
  bool take_ready(std::size_t& chunk);
  bool queue_encoded(Encoded&& e);
  void gather(const PartJob& p, const Shape& o, std::vector<std::uint8_t>& raw) const;
  void hand_chunks();
  void store(Encoded& e);
  std::vector<std::size_t> finishable_locked();
  void finish_parts(const std::vector<std::size_t>& which);
  void fail(std::exception_ptr e);
  void stop();

  const OutputType dtype_;
  const std::size_t element_;
  const std::function<void(std::size_t)> before_rename_;
  // Encoded chunks' buffers, back from the parts' writers once stored, for
  // the encoders' next chunks (no fresh pages to fault in per chunk). Before
  // parts_: their writers hand buffers back until they stop.
  FreeList<std::vector<std::uint8_t>> buffers_;
  std::vector<PartJob> parts_;
  std::vector<ChunkRef> chunks_;
  // What the threads share, under `mutex`.
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    // Per part, its chunks whose units are all written, not yet taken; the
    // encoders take one part's, then the next's, so the parts' files fill
    // side by side.
    std::vector<std::deque<std::size_t>> ready;
    std::size_t ready_count = 0, next_part = 0;
    std::deque<Encoded> queue;  // encoded, for the HDF5 thread; at most `limit`
    std::size_t limit = 0, taken = 0, renamed = 0;
    std::exception_ptr error;
    bool failed = false, stopping = false;
    // Encoders waiting for a ready chunk; while all of them wait (after the
    // first chunk, before the last taken) the stage waits for the slabs.
    unsigned idle = 0;
    Clock::time_point starved_since;
    bool starved = false;
  } shared_;
  struct Tallies {
    std::atomic<std::uint64_t> stored{0}, busy_ns{0}, writer_ns{0};
    // Encoders' thread-time waiting for ready chunks, and for room in the
    // HDF5 thread's queue; wall time with every encoder waiting for chunks.
    std::uint64_t slab_wait_ns = 0, queue_wait_ns = 0, starved_ns = 0;  // under shared_.mutex
    std::size_t encoded = 0;                                            // under shared_.mutex
    Clock::time_point all_encoded;  // the last chunk's time in the HDF5 thread's queue
    Clock::time_point start = Clock::now();
    std::atomic<bool> started{false};  // `start` is the first ready chunk's time
  } tally_;
  std::vector<std::thread> threads_;  // the encoders, then the HDF5 thread
  unsigned encoders_ = 0;
};

PartEncoder::PartEncoder(const std::vector<PartToCompress>& parts, int unit_axis, OutputType dtype,
                         const CompressionConfig& z, std::function<void(std::size_t)> before_rename)
    : dtype_(dtype),
      element_(stored_bytes(dtype)),
      before_rename_(std::move(before_rename)),
      buffers_(2 * static_cast<std::size_t>(std::max(1u, ChunkReader::threads()))),
      parts_(parts.size()) {
  register_codec_filters();
  shared_.ready.resize(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    PartJob& p = parts_[i];
    p.path = parts[i].path;
    p.tmp = p.path + ".z.tmp";
    p.what = "compressing the part '" + p.path + "'";
    p.dims = parts[i].dims;
    std::string damage;
    const std::uint64_t offset = part_offset(p.path, p.dims, dtype, damage);
    if (!damage.empty()) throw io_error(p.what + ": " + damage);
    p.raw_bytes = static_cast<std::uint64_t>(p.dims[0] * p.dims[1] * p.dims[2]) * element_;
    p.source = std::make_unique<PartSource>(p.path, offset, p.what);
    p.chunk = output_chunks(z, p.dims, element_);
    p.chunk_bytes = static_cast<std::size_t>(p.chunk[0] * p.chunk[1] * p.chunk[2]) * element_;
    p.pipeline = output_pipeline(z, element_, p.chunk_bytes);
    // Three chunks in flight per file: its writer stays busy while HDF5
    // places the other parts' chunks.
    if (h5::DeferredWrites::available())
      p.writes = std::make_unique<h5::DeferredWrites>(
          3 * p.chunk_bytes, [this](std::vector<std::uint8_t>&& b) { buffers_.give(std::move(b)); });
    const std::int64_t units = p.dims[static_cast<std::size_t>(unit_axis)];
    p.progress.row_units = p.chunk[static_cast<std::size_t>(unit_axis)];
    p.progress.unit_written.assign(static_cast<std::size_t>(units), 0);
    const std::int64_t rows = (units + p.progress.row_units - 1) / p.progress.row_units;
    p.progress.row_left.resize(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
      p.progress.row_left[static_cast<std::size_t>(r)] =
          std::min(p.progress.row_units, units - r * p.progress.row_units);
    p.progress.rows.resize(static_cast<std::size_t>(rows));
    for (std::int64_t a = 0; a < p.dims[0]; a += p.chunk[0])
      for (std::int64_t b = 0; b < p.dims[1]; b += p.chunk[1])
        for (std::int64_t c = 0; c < p.dims[2]; c += p.chunk[2]) {
          const Shape origin{a, b, c};
          p.progress.rows[static_cast<std::size_t>(origin[static_cast<std::size_t>(unit_axis)] / p.progress.row_units)]
              .push_back(chunks_.size());
          chunks_.push_back({i, origin});
          ++p.progress.chunks;
        }
  }
  try {
    for (PartJob& p : parts_) create_tmp(p, dtype_);
  } catch (...) {
    stop();
    throw;
  }
  encoders_ = std::max(1u, static_cast<unsigned>(std::min<std::size_t>(ChunkReader::threads(), chunks_.size())));
  shared_.limit = 2 * static_cast<std::size_t>(encoders_);
  for (unsigned t = 0; t < encoders_; ++t) threads_.emplace_back([this] { encode_chunks(); });
  threads_.emplace_back([this] {
    try {
      hand_chunks();
    } catch (...) { fail(std::current_exception()); }
  });
}

// Threads joined; anything not renamed goes, the parts stay contiguous.
void PartEncoder::stop() {
  {
    std::lock_guard<std::mutex> lock(shared_.mutex);
    shared_.stopping = true;
    shared_.changed.notify_all();
  }
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  for (PartJob& p : parts_) {
    p.dataset.reset();
    p.file.reset();
    if (p.stage != PartJob::Stage::renamed && !p.tmp.empty()) ::unlink(p.tmp.c_str());
  }
}

PartEncoder::~PartEncoder() { stop(); }

void PartEncoder::fail(std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(shared_.mutex);
  if (!shared_.error) shared_.error = e;
  shared_.failed = true;
  shared_.changed.notify_all();
}

void PartEncoder::written(std::size_t i, std::int64_t begin, std::int64_t end) {
  std::lock_guard<std::mutex> lock(shared_.mutex);
  PartJob& p = parts_.at(i);
  const auto units = static_cast<std::int64_t>(p.progress.unit_written.size());
  bool any = false;
  for (std::int64_t u = std::max<std::int64_t>(0, begin); u < std::min(end, units); ++u) {
    auto& w = p.progress.unit_written[static_cast<std::size_t>(u)];
    if (w) continue;
    w = 1;
    const auto r = static_cast<std::size_t>(u / p.progress.row_units);
    if (--p.progress.row_left[r] > 0) continue;
    shared_.ready[i].insert(shared_.ready[i].end(), p.progress.rows[r].begin(), p.progress.rows[r].end());
    shared_.ready_count += p.progress.rows[r].size();
    any = true;
  }
  if (!any) return;
  if (!tally_.started.exchange(true)) tally_.start = Clock::now();
  shared_.changed.notify_all();
}

void PartEncoder::durable(std::size_t i) {
  std::lock_guard<std::mutex> lock(shared_.mutex);
  parts_.at(i).progress.durable = true;
  shared_.changed.notify_all();
}

// The chunk at `o` into `raw`, as HDF5 stores it (the last chunk along an
// axis stored whole, padded): its values in runs as long as they lie in the
// part.
void PartEncoder::gather(const PartJob& p, const Shape& o, std::vector<std::uint8_t>& raw) const {
  const std::int64_t n0 = std::min(p.chunk[0], p.dims[0] - o[0]), n1 = std::min(p.chunk[1], p.dims[1] - o[1]),
                     n2 = std::min(p.chunk[2], p.dims[2] - o[2]);
  raw.resize(p.chunk_bytes);
  const bool whole = n0 == p.chunk[0] && n1 == p.chunk[1] && n2 == p.chunk[2];
  if (!whole) std::fill(raw.begin(), raw.end(), 0);
  const auto at = [&](std::int64_t a, std::int64_t b) {
    return static_cast<std::uint64_t>(((o[0] + a) * p.dims[1] + o[1] + b) * p.dims[2] + o[2]) * element_;
  };
  const bool rows_run = n1 == 1 || n2 == p.dims[2];  // one a's values in one run
  if (whole && rows_run && (n0 == 1 || (n1 == p.dims[1] && n2 == p.dims[2]))) {
    p.source->copy(at(0, 0), p.chunk_bytes, raw.data());
    return;
  }
  for (std::int64_t a = 0; a < n0; ++a) {
    std::uint8_t* row = raw.data() + static_cast<std::size_t>(a * p.chunk[1] * p.chunk[2]) * element_;
    if (rows_run && n2 == p.chunk[2]) {
      p.source->copy(at(a, 0), static_cast<std::size_t>(n1 * n2) * element_, row);
      continue;
    }
    for (std::int64_t b = 0; b < n1; ++b)
      p.source->copy(at(a, b), static_cast<std::size_t>(n2) * element_,
                     row + static_cast<std::size_t>(b * p.chunk[2]) * element_);
  }
}

// Waits for a ready chunk and takes it, the parts in turn; false when the
// encoders stop. Counts the wait, and the stage's wall time with every
// encoder waiting.
bool PartEncoder::take_ready(std::size_t& chunk) {
  std::unique_lock<std::mutex> lock(shared_.mutex);
  const auto begin = Clock::now();
  const bool counted = tally_.started && shared_.taken < chunks_.size();
  if (++shared_.idle == encoders_ && counted && shared_.ready_count == 0) {
    shared_.starved = true;
    shared_.starved_since = begin;
  }
  shared_.changed.wait(lock, [&] {
    return shared_.ready_count > 0 || shared_.failed || shared_.stopping || shared_.taken == chunks_.size();
  });
  --shared_.idle;
  if (shared_.starved) {
    tally_.starved_ns += elapsed_ns(shared_.starved_since);
    shared_.starved = false;
  }
  if (counted) tally_.slab_wait_ns += elapsed_ns(begin);
  if (shared_.failed || shared_.stopping || shared_.ready_count == 0) return false;
  std::size_t part = shared_.next_part;
  while (shared_.ready[part].empty()) part = (part + 1) % parts_.size();
  chunk = shared_.ready[part].front();
  shared_.ready[part].pop_front();
  shared_.next_part = (part + 1) % parts_.size();
  --shared_.ready_count;
  ++shared_.taken;
  return true;
}

// Queues an encoded chunk for the HDF5 thread once fewer than `limit` wait
// there; false when the encoders stop.
bool PartEncoder::queue_encoded(Encoded&& e) {
  std::unique_lock<std::mutex> lock(shared_.mutex);
  const auto begin = Clock::now();
  shared_.changed.wait(lock,
                       [&] { return shared_.queue.size() < shared_.limit || shared_.failed || shared_.stopping; });
  tally_.queue_wait_ns += elapsed_ns(begin);
  if (shared_.failed || shared_.stopping) return false;
  if (++tally_.encoded == chunks_.size()) tally_.all_encoded = Clock::now();
  shared_.queue.push_back(std::move(e));
  shared_.changed.notify_all();
  return true;
}

// An encoding thread: takes ready chunks, gathers and encodes each, queues it
// for the HDF5 thread.
void PartEncoder::encode_chunks() {
  use_process_affinity();
  std::vector<std::uint8_t> raw;
  codec::Workspace workspace;
  try {
    {
      // The codec's state and this thread's buffers made on a chunk of
      // zeros while the first slabs are on their way, not on the first
      // ready chunk.
      const PartJob& p = parts_.front();
      std::vector<std::uint8_t> out;
      raw.assign(p.chunk_bytes, 0);
      codec::encode(p.pipeline, raw.data(), raw.size(), out, &workspace);
      buffers_.give(std::move(out));
    }
    std::size_t i = 0;
    while (take_ready(i)) {
      const auto begin = Clock::now();
      const PartJob& p = parts_[chunks_[i].part];
      gather(p, chunks_[i].origin, raw);
      Encoded e{i, 0, buffers_.take()};
      e.mask = codec::encode(p.pipeline, raw.data(), raw.size(), e.bytes, &workspace);
      tally_.stored += e.bytes.size();
      tally_.busy_ns += elapsed_ns(begin);
      if (!queue_encoded(std::move(e))) return;
    }
  } catch (...) { fail(std::current_exception()); }
}

// The parts whose chunks are all stored and whose units are durable, marked
// as finishing.
std::vector<std::size_t> PartEncoder::finishable_locked() {
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    PartJob& p = parts_[i];
    if (p.stage != PartJob::Stage::open || !p.progress.durable || p.progress.stored < p.progress.chunks) continue;
    p.stage = PartJob::Stage::finishing;
    which.push_back(i);
  }
  return which;
}

// The one thread that calls HDF5 for the parts: each chunk into its part's
// dataset (the bytes handed to the part's writer), and each part finished
// once whole and durable.
void PartEncoder::hand_chunks() {
  for (;;) {
    Encoded e;
    std::vector<std::size_t> done;
    {
      std::unique_lock<std::mutex> lock(shared_.mutex);
      shared_.changed.wait(lock, [&] {
        if (shared_.failed || shared_.stopping || shared_.renamed == parts_.size() || !shared_.queue.empty())
          return true;
        done = finishable_locked();
        return !done.empty();
      });
      if (shared_.failed || shared_.stopping || (done.empty() && shared_.renamed == parts_.size())) return;
      if (done.empty()) {
        e = std::move(shared_.queue.front());
        shared_.queue.pop_front();
        shared_.changed.notify_all();
      }
    }
    if (!done.empty()) {
      finish_parts(done);
      std::lock_guard<std::mutex> lock(shared_.mutex);
      shared_.renamed += done.size();
      shared_.changed.notify_all();
      continue;
    }
    store(e);
  }
}

void PartEncoder::store(Encoded& e) {
  const ChunkRef& c = chunks_[e.chunk];
  PartJob& p = parts_[c.part];
  const hsize_t at[3] = {to_h(c.origin[0]), to_h(c.origin[1]), to_h(c.origin[2])};
  const auto begin = Clock::now();
  {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    const std::size_t size = e.bytes.size();
    const void* bytes = e.bytes.data();
    if (p.writes) h5::DeferredWrites::hand_over(std::move(e.bytes));
    const herr_t rc = H5Dwrite_chunk(p.dataset.get(), H5P_DEFAULT, e.mask, at, size, bytes);
    h5::DeferredWrites::take_back();
    tally_.writer_ns += elapsed_ns(begin);
    if (rc < 0) {
      const std::string why = p.writes ? p.writes->error() : std::string();
      throw io_error(p.what + ": writing a chunk failed (" + (why.empty() ? h5::error_messages() : why) + ")" +
                     no_space(p));
    }
  }
  std::lock_guard<std::mutex> lock(shared_.mutex);
  ++p.progress.stored;
  shared_.changed.notify_all();
}

// Closes each part's file (its writer drains), makes each `.z.tmp` durable
// side by side, then renames each over its part.
void PartEncoder::finish_parts(const std::vector<std::size_t>& which) {
  for (std::size_t i : which) {
    PartJob& p = parts_[i];
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    p.dataset.reset();
    const bool closed = p.file.close();
    const std::string why = p.writes ? p.writes->error() : std::string();
    if (!closed || !why.empty())
      throw io_error(p.what + ": HDF5 could not finish '" + p.tmp + "'" + (why.empty() ? "" : " (" + why + ")") +
                     no_space(p));
  }
  std::vector<std::string> errors(which.size());
  run_on_threads(static_cast<unsigned>(which.size()), [&](unsigned k) {
    const PartJob& p = parts_[which[k]];
    UniqueFd fd(::open(p.tmp.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0)
      errors[k] = p.what + ": cannot make '" + p.tmp + "' durable: " + std::strerror(errno);
  });
  for (const std::string& e : errors)
    if (!e.empty()) throw io_error(e);
  for (std::size_t i : which) {
    PartJob& p = parts_[i];
    if (before_rename_) before_rename_(i);
    p.source.reset();  // the contiguous part's pages go with its last handle
    if (::rename(p.tmp.c_str(), p.path.c_str()) != 0)
      throw io_error(p.what + ": renaming '" + p.tmp + "': " + std::strerror(errno));
    p.stage = PartJob::Stage::renamed;
  }
  fsync_dir(dir_of(parts_[which.front()].path));
}

CompressStats PartEncoder::finish() {
  const auto begin = Clock::now();
  {
    std::unique_lock<std::mutex> lock(shared_.mutex);
    for (const PartJob& p : parts_)
      if (!shared_.failed &&
          (!p.progress.durable || std::find(p.progress.unit_written.begin(), p.progress.unit_written.end(), 0) !=
                                      p.progress.unit_written.end())) {
        lock.unlock();
        stop();
        throw internal_error(p.what + ": the run left units of it unwritten or not durable");
      }
    shared_.changed.wait(lock, [&] { return shared_.renamed == parts_.size() || shared_.failed; });
  }
  stop();
  if (shared_.error) std::rethrow_exception(shared_.error);
  CompressStats stats;
  stats.parts = parts_.size();
  for (const PartJob& p : parts_) {
    stats.raw_bytes += p.raw_bytes;
    if (p.writes) stats.store_seconds += p.writes->busy_seconds();
  }
  stats.stored_bytes = tally_.stored;
  stats.seconds = tally_.started ? static_cast<double>(elapsed_ns(tally_.start)) * 1e-9 : 0.0;
  stats.tail_seconds = static_cast<double>(elapsed_ns(begin)) * 1e-9;
  stats.busy_seconds = static_cast<double>(tally_.busy_ns.load()) * 1e-9;
  stats.writer_seconds = static_cast<double>(tally_.writer_ns.load()) * 1e-9;
  stats.slab_wait_seconds = static_cast<double>(tally_.slab_wait_ns) * 1e-9;
  stats.queue_wait_seconds = static_cast<double>(tally_.queue_wait_ns) * 1e-9;
  stats.starved_seconds = static_cast<double>(tally_.starved_ns) * 1e-9;
  if (tally_.started && tally_.encoded == chunks_.size())
    stats.closing_seconds = static_cast<double>(elapsed_ns(tally_.all_encoded)) * 1e-9;
  stats.threads = encoders_;
  return stats;
}

CompressStats compress_parts(const std::vector<PartToCompress>& parts, OutputType dtype, const CompressionConfig& z) {
  CompressStats total;
  total.codec = describe_compression(z);
  const std::size_t at_once = std::max<unsigned>(1, ChunkReader::threads());
  for (std::size_t first = 0; first < parts.size(); first += at_once) {
    const std::vector<PartToCompress> wave(
        parts.begin() + static_cast<std::ptrdiff_t>(first),
        parts.begin() + static_cast<std::ptrdiff_t>(std::min(parts.size(), first + at_once)));
    PartEncoder encoder(wave, 0, dtype, z, {});
    for (std::size_t i = 0; i < wave.size(); ++i) {
      encoder.written(i, 0, wave[i].dims[0]);
      encoder.durable(i);
    }
    total.add(encoder.finish());
  }
  return total;
}

PartStream::PartStream(const std::vector<PartToCompress>& parts, int unit_axis, OutputType dtype,
                       const CompressionConfig& z, std::function<void(std::size_t)> before_rename)
    : encoder_(std::make_unique<PartEncoder>(parts, unit_axis, dtype, z, std::move(before_rename))) {}

PartStream::~PartStream() = default;

void PartStream::written(std::size_t i, std::int64_t begin, std::int64_t end) { encoder_->written(i, begin, end); }

void PartStream::durable(std::size_t i) { encoder_->durable(i); }

CompressStats PartStream::finish() { return encoder_->finish(); }

}  // namespace discount
