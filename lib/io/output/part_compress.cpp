#include "io/output/part_compress.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/input/chunk_reader.hpp"
#include "io/input/input.hpp"
#include "io/output/output_parts.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

namespace {

constexpr std::uint64_t kChunkTarget = std::uint64_t{2} << 20;

hsize_t to_h(std::int64_t v) { return static_cast<hsize_t>(v); }

int level_of(const CompressionConfig& z) { return z.level >= 0 ? z.level : default_level(z.codec); }

}  // namespace

codec::Pipeline output_pipeline(const CompressionConfig& z, std::size_t element_size, std::size_t chunk_bytes) {
  codec::Pipeline p;
  const auto level = static_cast<unsigned>(level_of(z));
  if (z.codec == Codec::blosc) {
    // hdf5-blosc's client data: filter and format versions, element size,
    // chunk bytes, level, shuffle (0 none, 1 byte, 2 bit), compressor (lz4).
    const unsigned shuffle = z.shuffle == ShuffleKind::byte ? 1 : z.shuffle == ShuffleKind::bit ? 2 : 0;
    p.push_back({codec::kBlosc,
                 1,
                 {2, 2, static_cast<unsigned>(element_size), static_cast<unsigned>(chunk_bytes), level, shuffle, 1}});
    return p;
  }
  if (z.shuffle == ShuffleKind::byte) p.push_back({codec::kShuffle, 1, {static_cast<unsigned>(element_size)}});
  switch (z.codec) {
    case Codec::deflate: p.push_back({codec::kDeflate, 1, {level}}); break;
    case Codec::zstd: p.push_back({codec::kZstd, 1, {level}}); break;
    case Codec::lz4: p.push_back({codec::kLz4, 1, {0}}); break;
    default: break;
  }
  return p;
}

std::string describe_compression(const CompressionConfig& z) {
  std::string text = codec_name(z.codec);
  if (z.codec != Codec::lz4) text += " " + std::to_string(level_of(z));
  if (z.shuffle != ShuffleKind::none) text += z.shuffle == ShuffleKind::bit ? " + bitshuffle" : " + shuffle";
  return text;
}

std::array<std::int64_t, 3> output_chunks(const CompressionConfig& z, const std::array<std::int64_t, 3>& dims,
                                          std::size_t element_size) {
  std::array<std::int64_t, 3> c{};
  if (!z.chunks.empty()) {
    for (int j = 0; j < 3; ++j) c[j] = std::clamp<std::int64_t>(z.chunks[static_cast<std::size_t>(j)], 1, dims[j]);
    return c;
  }
  const auto target = static_cast<std::int64_t>(kChunkTarget / element_size);  // elements
  c[2] = std::max<std::int64_t>(1, std::min(dims[2], target));
  c[1] = std::max<std::int64_t>(1, std::min(dims[1], target / c[2]));
  c[0] = std::max<std::int64_t>(1, std::min(dims[0], target / (c[1] * c[2])));
  // Even pieces: the last chunk along an axis is stored whole, padded, so a
  // short one would cost nearly a chunk of its own.
  for (int j = 0; j < 3; ++j) {
    const std::int64_t pieces = (dims[j] + c[j] - 1) / c[j];
    c[j] = (dims[j] + pieces - 1) / pieces;
  }
  return c;
}

void check_compression_available(const CompressionConfig& z) {
  if (!z.enabled()) return;
  const codec::Pipeline p = output_pipeline(z, 8, 1 << 20);
  const std::string why = codec::unimplemented(p);
  if (!why.empty())
    throw config_error(std::string("output.compression.codec: ") + codec_name(z.codec) +
                       " is not available in this build (" + why +
                       "); install its library (scripts/deps.sh) and rebuild, or choose deflate");
}

bool part_is_compressed(const std::string& path) {
  h5::QuietErrors quiet;
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id data = file ? h5::dataset(H5Dopen2(file.get(), kPartDataset, H5P_DEFAULT)) : h5::Id{};
  h5::Id dcpl = data ? h5::plist(H5Dget_create_plist(data.get())) : h5::Id{};
  return dcpl && H5Pget_layout(dcpl.get()) == H5D_CHUNKED;
}

namespace {
std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}
}  // namespace

std::string describe_stats(const CompressStats& z) {
  const double raw = static_cast<double>(z.raw_bytes);
  char line[320];
  std::snprintf(
      line, sizeof line,
      "%llu part(s), %.3f GB -> %.3f GB (ratio %.2f) in %.2f s on %u threads: %.2f GB/s, %.0f MB/s per thread; "
      "HDF5's chunk writes busy %.2f s",
      static_cast<unsigned long long>(z.parts), raw * 1e-9, static_cast<double>(z.stored_bytes) * 1e-9,
      z.stored_bytes ? raw / static_cast<double>(z.stored_bytes) : 0.0, z.seconds, z.threads,
      z.seconds > 0 ? raw * 1e-9 / z.seconds : 0.0, z.busy_seconds > 0 ? raw * 1e-6 / z.busy_seconds : 0.0,
      z.writer_seconds);
  return line;
}

CompressStats compress_part(const std::string& path, const std::array<std::int64_t, 3>& dims, OutputType dtype,
                            const CompressionConfig& z) {
  register_codec_filters();
  const auto start_time = std::chrono::steady_clock::now();
  const std::size_t element = stored_bytes(dtype);
  const std::string what = "compressing the part '" + path + "'";
  std::string damage;
  const std::uint64_t offset = part_offset(path, dims, dtype, damage);
  if (!damage.empty()) throw io_error(what + ": " + damage);
  const std::uint64_t raw_bytes = static_cast<std::uint64_t>(dims[0] * dims[1] * dims[2]) * element;

  // The contiguous part, mapped read-only.
  UniqueFd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) throw io_error(what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) throw io_error(what + ": " + std::strerror(errno));
  void* map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, in.get(), 0);
  if (map == MAP_FAILED) throw io_error(what + ": cannot map it: " + std::strerror(errno));
  struct Unmap {
    void* p;
    std::size_t n;
    ~Unmap() { ::munmap(p, n); }
  } unmap{map, static_cast<std::size_t>(st.st_size)};
  ::madvise(map, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
  const auto* data = static_cast<const std::uint8_t*>(map) + offset;

  const std::array<std::int64_t, 3> chunk = output_chunks(z, dims, element);
  const std::size_t chunk_bytes = static_cast<std::size_t>(chunk[0] * chunk[1] * chunk[2]) * element;
  const codec::Pipeline pipeline = output_pipeline(z, element, chunk_bytes);

  const std::string tmp = path + ".z.tmp";
  h5::Id file, dataset;
  {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    h5::QuietErrors quiet;
    file = h5::file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file) throw io_error(what + ": cannot create '" + tmp + "': " + std::strerror(errno));
    h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
    const hsize_t hchunk[3] = {to_h(chunk[0]), to_h(chunk[1]), to_h(chunk[2])};
    h5::check(H5Pset_chunk(dcpl.get(), 3, hchunk), "H5Pset_chunk");
    h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
    for (const codec::Filter& f : pipeline)
      if (H5Pset_filter(dcpl.get(), static_cast<H5Z_filter_t>(f.id), f.flags, f.values.size(), f.values.data()) < 0)
        throw io_error(what + ": HDF5 refused the filter " + codec::filter_name(f.id) + " (" + h5::error_messages() +
                       ")");
    const hsize_t hdims[3] = {to_h(dims[0]), to_h(dims[1]), to_h(dims[2])};
    h5::Id space = h5::dataspace(H5Screate_simple(3, hdims, nullptr));
    const hid_t stored = stored_hdf5_type(dtype);
    dataset =
        h5::dataset(H5Dcreate2(file.get(), kPartDataset, stored, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
    if (!dataset) throw io_error(what + ": HDF5 refused the dataset (" + h5::error_messages() + ")");
  }

  // Chunks in file order, claimed one at a time by the encoding threads:
  // each gathers its chunk (padded at the part's edges) and encodes it; this
  // thread alone hands the encoded chunks to HDF5 (a copy into the file), so
  // that no encoder waits on HDF5's lock. At most two chunks per encoder
  // wait for it.
  std::vector<std::array<std::int64_t, 3>> origins;
  for (std::int64_t a = 0; a < dims[0]; a += chunk[0])
    for (std::int64_t b = 0; b < dims[1]; b += chunk[1])
      for (std::int64_t c = 0; c < dims[2]; c += chunk[2]) origins.push_back({a, b, c});
  struct Encoded {
    std::size_t index;
    unsigned mask;
    std::vector<std::uint8_t> bytes;
  };
  std::mutex queue_mutex;
  std::condition_variable queue_changed;
  std::vector<Encoded> queue;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::atomic<std::uint64_t> stored_total{0}, busy_ns{0}, writer_ns{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto fail = [&](std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = e;
    }
    failed = true;
    std::lock_guard<std::mutex> lock(queue_mutex);
    queue_changed.notify_all();
  };
  const unsigned encoders =
      static_cast<unsigned>(std::min<std::size_t>(ChunkReader::threads(), std::max<std::size_t>(1, origins.size())));
  const std::size_t queue_limit = 2 * static_cast<std::size_t>(encoders);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < encoders; ++t)
    threads.emplace_back([&] {
      use_process_affinity();
      std::vector<std::uint8_t> raw(chunk_bytes);
      codec::Workspace workspace;
      try {
        for (std::size_t i = next++; i < origins.size() && !failed; i = next++) {
          // Busy: gathering and encoding, not waiting for the writer.
          const auto begin = std::chrono::steady_clock::now();
          const auto& o = origins[i];
          const std::int64_t n0 = std::min(chunk[0], dims[0] - o[0]), n1 = std::min(chunk[1], dims[1] - o[1]),
                             n2 = std::min(chunk[2], dims[2] - o[2]);
          if (n0 < chunk[0] || n1 < chunk[1] || n2 < chunk[2]) std::fill(raw.begin(), raw.end(), 0);
          for (std::int64_t a = 0; a < n0; ++a)
            for (std::int64_t b = 0; b < n1; ++b)
              std::memcpy(raw.data() + static_cast<std::size_t>((a * chunk[1] + b) * chunk[2]) * element,
                          data + static_cast<std::size_t>(((o[0] + a) * dims[1] + o[1] + b) * dims[2] + o[2]) * element,
                          static_cast<std::size_t>(n2) * element);
          Encoded e{i, 0, {}};
          e.mask = codec::encode(pipeline, raw.data(), raw.size(), e.bytes, &workspace);
          stored_total += e.bytes.size();
          busy_ns += elapsed_ns(begin);
          std::unique_lock<std::mutex> lock(queue_mutex);
          queue_changed.wait(lock, [&] { return queue.size() < queue_limit || failed; });
          queue.push_back(std::move(e));
          queue_changed.notify_all();
        }
      } catch (...) { fail(std::current_exception()); }
    });
  try {
    for (std::size_t written = 0; written < origins.size() && !failed; ++written) {
      Encoded e;
      {
        std::unique_lock<std::mutex> lock(queue_mutex);
        queue_changed.wait(lock, [&] { return !queue.empty() || failed; });
        if (failed) break;
        e = std::move(queue.back());
        queue.pop_back();
        queue_changed.notify_all();
      }
      const auto& o = origins[e.index];
      const hsize_t at[3] = {to_h(o[0]), to_h(o[1]), to_h(o[2])};
      const auto begin = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> lock(h5::library_mutex());
      if (H5Dwrite_chunk(dataset.get(), H5P_DEFAULT, e.mask, at, e.bytes.size(), e.bytes.data()) < 0)
        throw io_error(what + ": writing a chunk failed (" + h5::error_messages() + ")" +
                       (errno == ENOSPC ? ": no space left on device" : ""));
      writer_ns += elapsed_ns(begin);
    }
  } catch (...) { fail(std::current_exception()); }
  for (auto& t : threads) t.join();
  const unsigned threads_used = encoders;
  {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    dataset.reset();
    const bool closed = file.close();
    if (!error && !closed)
      error = std::make_exception_ptr(io_error(what + ": HDF5 could not finish '" + tmp + "'" +
                                               (errno == ENOSPC ? ": no space left on device" : "")));
  }
  if (error) {
    ::unlink(tmp.c_str());
    std::rethrow_exception(error);
  }
  {
    UniqueFd out(::open(tmp.c_str(), O_RDONLY | O_CLOEXEC));
    if (out.get() < 0 || ::fsync(out.get()) != 0) {
      ::unlink(tmp.c_str());
      throw io_error(what + ": cannot make '" + tmp + "' durable: " + std::strerror(errno));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw io_error(what + ": renaming '" + tmp + "': " + std::strerror(errno));
  }
  fsync_dir(dir_of(path));
  CompressStats stats;
  stats.parts = 1;
  stats.raw_bytes = raw_bytes;
  stats.stored_bytes = stored_total;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  stats.busy_seconds = static_cast<double>(busy_ns.load()) * 1e-9;
  stats.writer_seconds = static_cast<double>(writer_ns.load()) * 1e-9;
  stats.threads = threads_used;
  return stats;
}

CompressionEstimate estimate_compression(InputSource& input, Range dates, Range ids, OutputType dtype,
                                         const CompressionConfig& z, std::uint64_t output_bytes) {
  CompressionEstimate e;
  const std::int64_t nums = input.shape().nums;
  const std::size_t element = stored_bytes(dtype);
  // About one auto chunk per piece, whole nums.
  const auto rows =
      std::max<std::int64_t>(1, std::min<std::int64_t>(ids.size(), static_cast<std::int64_t>(kChunkTarget / element) /
                                                                       std::max<std::int64_t>(1, nums)));
  const int pieces = static_cast<int>(std::min<std::int64_t>(4, dates.size()));
  std::vector<double> disc(static_cast<std::size_t>(rows * nums)), mult(disc.size());
  std::vector<std::uint8_t> raw(disc.size() * element), stored;
  const codec::Pipeline pipeline = output_pipeline(z, element, raw.size());
  codec::Workspace workspace;
  std::uint64_t raw_total = 0, stored_total = 0;
  double seconds = 0;
  const Range sample_ids{ids.begin, ids.begin + rows};
  input.read_multiplier(sample_ids, mult.data());
  for (int p = 0; p < pieces; ++p) {
    const std::int64_t d = dates.begin + dates.size() * p / std::max(1, pieces);
    input.read_discount({d, d + 1}, sample_ids, disc.data());
    // The input's axis order: one date's [ids x nums] block either way when
    // the file is [date, id, num]; other orders are sampled in the same
    // shape, which estimates their ratio less exactly.
    for (std::size_t j = 0; j < disc.size(); ++j) {
      const double v = mult[j] * disc[j];
      if (dtype == OutputType::float32) {
        const auto f = static_cast<float>(v);
        std::memcpy(raw.data() + j * 4, &f, 4);
      } else {
        std::memcpy(raw.data() + j * 8, &v, 8);
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    codec::encode(pipeline, raw.data(), raw.size(), stored, &workspace);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    raw_total += raw.size();
    stored_total += stored.size();
  }
  e.sample_bytes = raw_total;
  e.ratio = stored_total ? static_cast<double>(raw_total) / static_cast<double>(stored_total) : 0;
  e.thread_rate = seconds > 0 ? static_cast<double>(raw_total) / seconds : 0;
  e.threads = ChunkReader::threads();
  e.stored_bytes = e.ratio > 0 ? static_cast<std::uint64_t>(static_cast<double>(output_bytes) / e.ratio) : 0;
  e.seconds = e.thread_rate > 0 ? static_cast<double>(output_bytes) / (e.thread_rate * e.threads) : 0;
  return e;
}

void read_compressed_part(hid_t dataset, OutputType dtype, const std::array<std::int64_t, 3>& start,
                          const std::array<std::int64_t, 3>& count, void* buffer, const std::string& what) {
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  h5::QuietErrors quiet;
  const hsize_t s[3] = {to_h(start[0]), to_h(start[1]), to_h(start[2])};
  const hsize_t n[3] = {to_h(count[0]), to_h(count[1]), to_h(count[2])};
  h5::Id file_space = h5::dataspace(H5Dget_space(dataset));
  h5::Id mem_space = h5::dataspace(H5Screate_simple(3, n, nullptr));
  const hid_t memory = dtype == OutputType::float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  if (!file_space || H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, s, nullptr, n, nullptr) < 0 ||
      H5Dread(dataset, memory, mem_space.get(), file_space.get(), H5P_DEFAULT, buffer) < 0)
    throw data_error(what + ": the compressed part cannot be read (" + h5::error_messages() +
                     "); check it with h5dump");
}

}  // namespace discount
