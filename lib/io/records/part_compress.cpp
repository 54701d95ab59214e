#include "io/records/part_compress.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/error.hpp"
#include "common/host_parallel.hpp"
#include "io/hdf5/hdf5_filters.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/input/chunk_reader.hpp"
#include "io/input/input.hpp"
#include "io/records/output_parts.hpp"

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

std::string describe_stats(const CompressStats& z) {
  const double raw = static_cast<double>(z.raw_bytes);
  char line[640];
  std::snprintf(
      line, sizeof line,
      "%llu part(s), %.3f GB -> %.3f GB (ratio %.2f) in %.2f s on %u threads: %.2f GB/s, %.0f MB/s per thread; "
      "HDF5's chunk writes busy %.2f s, the parts' writers %.2f thread-s; %.2f s after the last slab; the "
      "encoders waited %.2f thread-s for slabs (all of them %.2f s) and %.2f thread-s for HDF5's thread; "
      "closing the parts took %.2f s",
      static_cast<unsigned long long>(z.parts), raw * 1e-9, static_cast<double>(z.stored_bytes) * 1e-9,
      z.stored_bytes ? raw / static_cast<double>(z.stored_bytes) : 0.0, z.seconds, z.threads,
      z.seconds > 0 ? raw * 1e-9 / z.seconds : 0.0, z.busy_seconds > 0 ? raw * 1e-6 / z.busy_seconds : 0.0,
      z.writer_seconds, z.store_seconds, z.tail_seconds, z.slab_wait_seconds, z.starved_seconds, z.queue_wait_seconds,
      z.closing_seconds);
  return line;
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
  std::vector<std::uint8_t> raw(disc.size() * element), stored, samples;
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
    // The codec's state made once, untimed, before the timed encodes.
    if (p == 0) codec::encode(pipeline, raw.data(), raw.size(), stored, &workspace);
    const auto t0 = std::chrono::steady_clock::now();
    codec::encode(pipeline, raw.data(), raw.size(), stored, &workspace);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    raw_total += raw.size();
    stored_total += stored.size();
    samples.insert(samples.end(), raw.begin(), raw.end());
  }
  e.sample_bytes = raw_total;
  e.ratio = stored_total ? static_cast<double>(raw_total) / static_cast<double>(stored_total) : 0;
  e.thread_rate = seconds > 0 ? static_cast<double>(raw_total) / seconds : 0;
  e.threads = ChunkReader::threads();
  e.stored_bytes = e.ratio > 0 ? static_cast<std::uint64_t>(static_cast<double>(output_bytes) / e.ratio) : 0;
  e.seconds = e.thread_rate > 0 ? static_cast<double>(output_bytes) / (e.thread_rate * e.threads) : 0;
  // Every thread encodes the pieces (read-only, shared) into buffers of its
  // own, the first once to warm: two chunks of memory per thread.
  std::vector<std::vector<std::uint8_t>> outs(e.threads);
  std::vector<codec::Workspace> spaces(e.threads);
  const auto encode = [&](unsigned t, std::size_t piece) {
    codec::encode(pipeline, samples.data() + piece * raw.size(), raw.size(), outs[t], &spaces[t]);
  };
  const double together = seconds_together(
      e.threads, [&](unsigned t) { encode(t, 0); },
      [&](unsigned t) {
        for (int p = 0; p < pieces; ++p) encode(t, static_cast<std::size_t>(p));
      });
  e.together_rate = together > 0 ? static_cast<double>(raw_total) * e.threads / together : 0;
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
