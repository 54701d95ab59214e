// The compression filters of codec.hpp, each as HDF5's filter or the
// standard plugin stores its chunks: deflate (zlib format; libdeflate when
// the build found it, else zlib), zstd (one frame), LZ4 (hdf5plugin's
// blocked format), Blosc (one Blosc buffer). Private to lib/codec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codec/codec.hpp"

namespace discount::codec {

bool have_zstd();
bool have_lz4();
bool have_blosc();

// Inflates `size` bytes of `in` into exactly `want` bytes at `out`; throws
// DamagedChunk otherwise.
void decompress(const Filter& filter, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want);
// Compresses `size` bytes into `out`. False when `optional` and the result
// would not be smaller than the input (the filter is then skipped).
bool compress(const Filter& filter, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out,
              bool optional);

}  // namespace discount::codec
