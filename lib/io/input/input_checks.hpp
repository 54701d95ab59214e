// How an input dataset is stored, checked before any data is read: a file
// whose metadata was damaged (a flipped byte in a layout message or a chunk
// index node) can make HDF5 read past its buffers and crash the process, or
// silently read the wrong bytes. What HDF5 reports about the storage is held
// against itself and against the dataset's shape, and anything inconsistent
// is refused with ExitCode::data_invalid (65), naming the file and dataset.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace discount {

struct StorageFacts {
  H5D_layout_t layout = H5D_CONTIGUOUS;
  std::vector<hsize_t> chunk;        // chunk dims (chunked only)
  std::uint64_t chunk_bytes = 0;     // one chunk in the file's element size, before filters
  std::uint64_t chunks = 0;          // chunks a whole read of the dataset touches (chunked only)
  std::vector<std::string> filters;  // names, in pipeline order
  int externals = 0;                 // external raw storage files
};

// `where`: "input.discount: dataset 'discount' in 'in.h5'"; `dims`: the
// dataset's extents; `element_size`: its stored type's size. Throws
// discount::Error (65) for damaged or impossible storage, and for a filter
// this HDF5 cannot decode.
StorageFacts check_storage(hid_t dataset, hid_t dcpl, const std::vector<hsize_t>& dims, std::size_t element_size,
                           const std::string& where);

// A float type must have an IEEE 754 layout for its size (16, 32 or 64
// bits: sign, exponent and mantissa positions, exponent bias): a damaged
// datatype message that moves them would make HDF5 convert garbage. Throws
// discount::Error (65).
void check_float_layout(hid_t type, const std::string& where);

// The chunk shape as one line of advice, when it will make reads slow
// (chunks under 64 KiB): "chunks of [1 x 16 x 1] (128 B) make HDF5 reads
// slow; `h5repack -l discount:CHUNK=1x50000x5 in.h5 out.h5` (or -l
// discount:CONTI) rewrites them". Empty when the shape is fine.
std::string chunk_advice(const StorageFacts& storage, const std::string& dataset, const std::vector<hsize_t>& dims,
                         std::size_t element_size, const std::string& file);

// Sub-boxes of a read of `count` at `start` whose chunks number at most
// `max_chunks` each (HDF5 keeps a few hundred bytes of bookkeeping per chunk a
// read touches, so one read over a million tiny chunks takes a gigabyte),
// cut along the slowest axis on chunk boundaries; at least one chunk-row
// thick. Without chunks: the box itself. Each element is {start, count}.
struct SubBox {
  std::vector<hsize_t> start, count;
};
std::vector<SubBox> chunk_bounded_boxes(const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                                        const std::vector<hsize_t>& chunk, std::uint64_t max_chunks);

}  // namespace discount
