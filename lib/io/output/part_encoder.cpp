#include "io/output/part_encoder.hpp"

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

// A contiguous part, mapped read-only: its values start at `data`.
class MappedPart {
 public:
  MappedPart(const std::string& path, std::uint64_t offset, const std::string& what) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) throw io_error(what + ": " + std::strerror(errno));
    size_ = static_cast<std::size_t>(st.st_size);
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd.get(), 0);
    if (map_ == MAP_FAILED) throw io_error(what + ": cannot map it: " + std::strerror(errno));
    ::madvise(map_, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const std::uint8_t*>(map_) + offset;
  }
  ~MappedPart() { ::munmap(map_, size_); }
  MappedPart(const MappedPart&) = delete;
  MappedPart& operator=(const MappedPart&) = delete;
  const std::uint8_t* data() const { return data_; }

 private:
  void* map_ = MAP_FAILED;
  std::size_t size_ = 0;
  const std::uint8_t* data_ = nullptr;
};

// One part on its way: the mapped source, the chunked `.z.tmp` and its writer.
struct PartJob {
  std::string path, tmp, what;
  Shape dims{}, chunk{};
  std::size_t chunk_bytes = 0;
  codec::Pipeline pipeline;
  std::unique_ptr<MappedPart> source;
  std::unique_ptr<h5::DeferredWrites> writes;  // null: HDF5's own writes
  h5::Id file, dataset;
  std::uint64_t raw_bytes = 0;
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

class PartCompressor {
 public:
  PartCompressor(const std::vector<PartToCompress>& parts, OutputType dtype, const CompressionConfig& z);
  ~PartCompressor();
  CompressStats run();

 private:
  void encode_chunks();
  void gather(const PartJob& p, const Shape& o, std::vector<std::uint8_t>& raw) const;
  void hand_chunks();
  void finish_parts();
  void fail(std::exception_ptr e);

  const OutputType dtype_;
  const std::size_t element_;
  std::vector<PartJob> parts_;
  std::vector<ChunkRef> chunks_;  // one of each part in turn
  std::size_t queue_limit_ = 0;
  std::mutex mutex_;  // guards queue_ and error_
  std::condition_variable changed_;
  std::deque<Encoded> queue_;
  std::exception_ptr error_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::atomic<std::uint64_t> stored_{0}, busy_ns_{0}, writer_ns_{0};
};

PartCompressor::PartCompressor(const std::vector<PartToCompress>& parts, OutputType dtype, const CompressionConfig& z)
    : dtype_(dtype), element_(stored_bytes(dtype)), parts_(parts.size()) {
  register_codec_filters();
  std::size_t most_chunks = 0;
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
    p.source = std::make_unique<MappedPart>(p.path, offset, p.what);
    p.chunk = output_chunks(z, p.dims, element_);
    p.chunk_bytes = static_cast<std::size_t>(p.chunk[0] * p.chunk[1] * p.chunk[2]) * element_;
    p.pipeline = output_pipeline(z, element_, p.chunk_bytes);
    // Three chunks in flight per file: its writer stays busy while HDF5
    // places the other parts' chunks.
    if (h5::DeferredWrites::available()) p.writes = std::make_unique<h5::DeferredWrites>(3 * p.chunk_bytes);
    std::size_t n = 0;
    for (std::int64_t a = 0; a < p.dims[0]; a += p.chunk[0])
      for (std::int64_t b = 0; b < p.dims[1]; b += p.chunk[1])
        for (std::int64_t c = 0; c < p.dims[2]; c += p.chunk[2]) ++n;
    most_chunks = std::max(most_chunks, n);
  }
  for (std::size_t k = 0; k < most_chunks; ++k)
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      const PartJob& p = parts_[i];
      const std::int64_t per1 = (p.dims[1] + p.chunk[1] - 1) / p.chunk[1];
      const std::int64_t per2 = (p.dims[2] + p.chunk[2] - 1) / p.chunk[2];
      const auto kk = static_cast<std::int64_t>(k);
      if (kk >= per1 * per2 * ((p.dims[0] + p.chunk[0] - 1) / p.chunk[0])) continue;
      chunks_.push_back({i, {kk / (per1 * per2) * p.chunk[0], kk / per2 % per1 * p.chunk[1], kk % per2 * p.chunk[2]}});
    }
}

PartCompressor::~PartCompressor() {
  // Anything not renamed goes; the parts stay contiguous.
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  for (PartJob& p : parts_) {
    p.dataset.reset();
    p.file.reset();
    if (!p.tmp.empty()) ::unlink(p.tmp.c_str());
  }
}

void PartCompressor::fail(std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_) error_ = e;
  failed_ = true;
  changed_.notify_all();
}

void PartCompressor::gather(const PartJob& p, const Shape& o, std::vector<std::uint8_t>& raw) const {
  const std::int64_t n0 = std::min(p.chunk[0], p.dims[0] - o[0]), n1 = std::min(p.chunk[1], p.dims[1] - o[1]),
                     n2 = std::min(p.chunk[2], p.dims[2] - o[2]);
  raw.resize(p.chunk_bytes);
  // The last chunk along an axis is stored whole, padded.
  if (n0 < p.chunk[0] || n1 < p.chunk[1] || n2 < p.chunk[2]) std::fill(raw.begin(), raw.end(), 0);
  const std::uint8_t* data = p.source->data();
  for (std::int64_t a = 0; a < n0; ++a)
    for (std::int64_t b = 0; b < n1; ++b)
      std::memcpy(raw.data() + static_cast<std::size_t>((a * p.chunk[1] + b) * p.chunk[2]) * element_,
                  data + static_cast<std::size_t>(((o[0] + a) * p.dims[1] + o[1] + b) * p.dims[2] + o[2]) * element_,
                  static_cast<std::size_t>(n2) * element_);
}

// An encoding thread: claims chunks, gathers and encodes each, queues it for
// the HDF5 thread; at most `queue_limit_` wait there.
void PartCompressor::encode_chunks() {
  use_process_affinity();
  std::vector<std::uint8_t> raw;
  codec::Workspace workspace;
  try {
    for (std::size_t i = next_++; i < chunks_.size() && !failed_; i = next_++) {
      const auto begin = Clock::now();
      const PartJob& p = parts_[chunks_[i].part];
      gather(p, chunks_[i].origin, raw);
      Encoded e{i, 0, {}};
      e.mask = codec::encode(p.pipeline, raw.data(), raw.size(), e.bytes, &workspace);
      stored_ += e.bytes.size();
      busy_ns_ += elapsed_ns(begin);
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return queue_.size() < queue_limit_ || failed_; });
      queue_.push_back(std::move(e));
      changed_.notify_all();
    }
  } catch (...) { fail(std::current_exception()); }
}

// The one thread that calls HDF5: each chunk into its part's dataset, the
// bytes handed to the part's writer.
void PartCompressor::hand_chunks() {
  for (std::size_t written = 0; written < chunks_.size() && !failed_; ++written) {
    Encoded e;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty() || failed_; });
      if (failed_) return;
      e = std::move(queue_.front());
      queue_.pop_front();
      changed_.notify_all();
    }
    const ChunkRef& c = chunks_[e.chunk];
    PartJob& p = parts_[c.part];
    const hsize_t at[3] = {to_h(c.origin[0]), to_h(c.origin[1]), to_h(c.origin[2])};
    const auto begin = Clock::now();
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    const std::size_t size = e.bytes.size();
    const void* bytes = e.bytes.data();
    if (p.writes) h5::DeferredWrites::hand_over(std::move(e.bytes));
    const herr_t rc = H5Dwrite_chunk(p.dataset.get(), H5P_DEFAULT, e.mask, at, size, bytes);
    h5::DeferredWrites::take_back();
    writer_ns_ += elapsed_ns(begin);
    if (rc < 0) {
      const std::string why = p.writes ? p.writes->error() : std::string();
      throw io_error(p.what + ": writing a chunk failed (" + (why.empty() ? h5::error_messages() : why) + ")" +
                     no_space(p));
    }
  }
}

// Closes each part's file (its writer drains), makes every `.z.tmp` durable
// side by side, then renames each over its part.
void PartCompressor::finish_parts() {
  for (PartJob& p : parts_) {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    p.dataset.reset();
    const bool closed = p.file.close();
    const std::string why = p.writes ? p.writes->error() : std::string();
    if (!closed || !why.empty())
      throw io_error(p.what + ": HDF5 could not finish '" + p.tmp + "'" + (why.empty() ? "" : " (" + why + ")") +
                     no_space(p));
  }
  std::vector<std::string> errors(parts_.size());
  run_on_threads(static_cast<unsigned>(parts_.size()), [&](unsigned i) {
    UniqueFd fd(::open(parts_[i].tmp.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0)
      errors[i] = parts_[i].what + ": cannot make '" + parts_[i].tmp + "' durable: " + std::strerror(errno);
  });
  for (const std::string& e : errors)
    if (!e.empty()) throw io_error(e);
  for (PartJob& p : parts_) {
    if (::rename(p.tmp.c_str(), p.path.c_str()) != 0)
      throw io_error(p.what + ": renaming '" + p.tmp + "': " + std::strerror(errno));
    p.tmp.clear();  // renamed: nothing to remove
  }
  fsync_dir(dir_of(parts_.front().path));
}

CompressStats PartCompressor::run() {
  const auto start = Clock::now();
  for (PartJob& p : parts_) create_tmp(p, dtype_);
  const auto encoders =
      static_cast<unsigned>(std::min<std::size_t>(ChunkReader::threads(), std::max<std::size_t>(1, chunks_.size())));
  queue_limit_ = 2 * static_cast<std::size_t>(encoders);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < encoders; ++t) threads.emplace_back([this] { encode_chunks(); });
  try {
    hand_chunks();
  } catch (...) { fail(std::current_exception()); }
  for (auto& t : threads) t.join();
  if (error_) std::rethrow_exception(error_);
  finish_parts();
  CompressStats stats;
  stats.parts = parts_.size();
  for (const PartJob& p : parts_) {
    stats.raw_bytes += p.raw_bytes;
    if (p.writes) stats.store_seconds += p.writes->busy_seconds();
  }
  stats.stored_bytes = stored_;
  stats.seconds = static_cast<double>(elapsed_ns(start)) * 1e-9;
  stats.busy_seconds = static_cast<double>(busy_ns_.load()) * 1e-9;
  stats.writer_seconds = static_cast<double>(writer_ns_.load()) * 1e-9;
  stats.threads = encoders;
  return stats;
}

}  // namespace

CompressStats compress_parts(const std::vector<PartToCompress>& parts, OutputType dtype, const CompressionConfig& z) {
  CompressStats total;
  total.codec = describe_compression(z);
  const std::size_t at_once = std::max<unsigned>(1, ChunkReader::threads());
  for (std::size_t first = 0; first < parts.size(); first += at_once) {
    const std::vector<PartToCompress> wave(
        parts.begin() + static_cast<std::ptrdiff_t>(first),
        parts.begin() + static_cast<std::ptrdiff_t>(std::min(parts.size(), first + at_once)));
    PartCompressor compressor(wave, dtype, z);
    total.add(compressor.run());
  }
  return total;
}

}  // namespace discount
