// HDF5 filter pipelines run by the app's own threads: a stored chunk decoded
// (Fletcher32 checked, zstd / LZ4 / Blosc / deflate inflated, shuffle undone)
// or a raw chunk encoded, byte for byte as HDF5's filters and the standard
// plugins (hdf5plugin, hdf5-blosc) store it, so chunks of one dataset are
// (de)compressed on every core at once instead of on one thread under HDF5's
// lock. Pure: no HDF5, no Kokkos; each call is thread-safe and keeps its
// (de)compressor state per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace discount::codec {

// The registered HDF5 filter ids this file knows.
enum FilterId : int {
  kDeflate = 1,
  kShuffle = 2,
  kFletcher32 = 3,
  kBlosc = 32001,
  kLz4 = 32004,
  kBitshuffle = 32008,
  kZstd = 32015,
};

// One filter of a dataset's pipeline, as HDF5 declares it.
struct Filter {
  int id = 0;
  unsigned flags = 0;            // H5Z_FLAG_OPTIONAL = 1
  std::vector<unsigned> values;  // the client data (cd_values)
};
using Pipeline = std::vector<Filter>;  // in the order HDF5 applies them on write

// "deflate", "shuffle", "fletcher32", "zstd", "lz4", "blosc", "bitshuffle",
// else "filter <id>".
std::string filter_name(int id);
// "shuffle + deflate 4", "shuffle + zstd 3 + fletcher32": the pipeline as the
// run header and the report name it; "none" when empty.
std::string describe(const Pipeline& pipeline);

// True when this build decodes and encodes filter `id` itself.
bool implemented(int id);
// Empty when every filter of `pipeline` is implemented; else why the
// pipeline stays with HDF5 ("filter bitshuffle (32008) is not one the app
// decodes").
std::string unimplemented(const Pipeline& pipeline);

// A stored chunk that does not decode: the message says what failed
// ("deflate stream is damaged", "Fletcher32 checksum mismatch").
class DamagedChunk : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Two scratch chunks a decode or encode works in. Keep one per thread and
// hand it to every call: a fresh one costs its pages' first touch on each
// chunk. Calls without one use a scratch of the calling thread's own.
struct Workspace {
  std::vector<std::uint8_t> a, b;
};

// Decodes a stored chunk of `stored_bytes` into `out`, which must receive
// exactly `chunk_bytes` (the chunk's full, unfiltered size). Bit i of
// `mask` set: filter i was skipped for this chunk (an optional filter that
// did not apply). Throws DamagedChunk when the bytes do not decode to
// exactly chunk_bytes or a checksum fails.
void decode(const Pipeline& pipeline, unsigned mask, const std::uint8_t* stored, std::size_t stored_bytes,
            std::uint8_t* out, std::size_t chunk_bytes, Workspace* workspace = nullptr);

// Encodes a raw chunk through `pipeline` into `out` (resized to the stored
// size); returns the filter mask to declare with it (bit i: filter i
// skipped, for an optional filter whose output would not be smaller).
unsigned encode(const Pipeline& pipeline, const std::uint8_t* raw, std::size_t raw_bytes,
                std::vector<std::uint8_t>& out, Workspace* workspace = nullptr);

// The size one compression filter's stream decodes to, read from its own
// header (zstd's frame, LZ4's and Blosc's headers); 0 when the stream does
// not say (deflate) or is too short to. For HDF5's filter callbacks, which
// are not told the chunk's size.
std::size_t decoded_size(const Filter& filter, const std::uint8_t* stored, std::size_t stored_bytes);
// One filter undone (decode) or applied (encode) on its own, as HDF5's
// filter callbacks run them; encode_one returns false for an optional
// filter whose output would not be smaller.
void decode_one(const Filter& filter, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want);
bool encode_one(const Filter& filter, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out);

// The building blocks, exposed for their tests.
void shuffle(const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, std::size_t element_size);
void unshuffle(const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, std::size_t element_size);
std::uint32_t fletcher32(const std::uint8_t* data, std::size_t bytes);

}  // namespace discount::codec
