// output.compression: each part of a split output, compressed in place.
// The run writes contiguous parts as always (positional writes at fixed
// offsets, so a kill cannot damage HDF5 metadata, and the done ranges stay
// exact); io/compress/part_encoder.hpp stores each part again as chunks
// compressed on every core (lib/codec), while the run writes or after it,
// with HDF5's direct chunk write under the standard filter ids (deflate 1,
// shuffle 2, LZ4 32004, Blosc 32001, zstd 32015), in `<part>.z.tmp`, made
// durable and renamed over the part once all its units are recorded
// durable. A part is therefore either its contiguous self or its compressed
// self, each whole; a kill in between leaves one of the two, and the resume
// compresses what is left. Any HDF5 reader with the filter (h5py: deflate
// built in, the others through hdf5plugin) reads the result; the master's
// virtual dataset maps the parts whatever their layout. Here: what a
// compressed part declares and how it is cut, read back and estimated.
#pragma once

#include <hdf5.h>

#include <array>
#include <cstdint>
#include <string>

#include "codec/codec.hpp"
#include "common/range.hpp"
#include "config/config.hpp"
#include "io/records/compress_stats.hpp"

namespace discount {

// The filters a compressed part declares, in HDF5's order, for elements of
// `element_size` bytes in chunks of `chunk_bytes`.
codec::Pipeline output_pipeline(const CompressionConfig& z, std::size_t element_size, std::size_t chunk_bytes);
// "zstd 3 + shuffle", as the run header says it.
std::string describe_compression(const CompressionConfig& z);

// The chunk shape of a part of `dims` (the output's axis order): the
// configured one, cut to the part; auto: whole along the last axis, about
// 2 MiB (at least 1 MiB when the part allows, at most 4 MiB).
std::array<std::int64_t, 3> output_chunks(const CompressionConfig& z, const std::array<std::int64_t, 3>& dims,
                                          std::size_t element_size);

// Throws config_error (78) when this build cannot write `z` (a codec whose
// library was not found).
void check_compression_available(const CompressionConfig& z);

// "3 part(s), 1.000 GB -> 0.400 GB (ratio 2.50) in 0.50 s on 16 threads: 2.00
// GB/s, 150 MB/s per thread; HDF5's chunk writes busy 0.20 s", the figures of
// the stderr line.
std::string describe_stats(const CompressStats& z);

// True when the part at `path` already holds its data compressed (chunked).
bool part_is_compressed(const std::string& path);

// What output.compression will make of this job's output, from a sample of
// its own values (up to four one-date pieces of about a chunk each, spread
// over the selection, multiplied as the run multiplies them), encoded on
// one thread: the ratio, that thread's rate, and from them the stored size
// and the compression's time on `threads` threads; then the sample encoded
// by every one of those threads at once, each into buffers of its own: what
// the cores reach together, which may be less than one thread's rate times
// the threads. For `plan`.
struct CompressionEstimate {
  std::uint64_t sample_bytes = 0;
  double ratio = 0;          // raw / stored
  double thread_rate = 0;    // raw bytes per second, one thread
  double together_rate = 0;  // raw bytes per second, every thread encoding at once
  std::uint64_t stored_bytes = 0;
  double seconds = 0;
  unsigned threads = 0;
};
class InputSource;
CompressionEstimate estimate_compression(InputSource& input, Range dates, Range ids, OutputType dtype,
                                         const CompressionConfig& z, std::uint64_t output_bytes);

// Reads the box at `start` of `count` of a compressed part's dataset, as
// stored (float32 values packed), through HDF5's filters.
void read_compressed_part(hid_t dataset, OutputType dtype, const std::array<std::int64_t, 3>& start,
                          const std::array<std::int64_t, 3>& count, void* buffer, const std::string& what);

}  // namespace discount
