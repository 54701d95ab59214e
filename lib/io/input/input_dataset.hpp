// One dataset of an HDF5 input, opened and checked: what Hdf5Input
// (io/input/input.cpp) needs to read slabs of it, by positional reads when the
// storage allows, else through HDF5.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/input/chunk_reader.hpp"
#include "io/input/input_checks.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

struct DatasetInfo {
  h5::Id id;
  std::vector<hsize_t> dims;
  // Positional reads: contiguous, allocated, unfiltered, in the HDF5 file
  // itself (not external raw storage, not virtual), native float64. `fd` is
  // a duplicate of the descriptor HDF5 opened for the file that holds the
  // dataset, which an external link makes another file than input.file.
  bool fast = false;
  UniqueFd fd;
  haddr_t offset = HADDR_UNDEF;
  std::string holder;    // the file holding the dataset, when not input.file (external link)
  std::string slow_why;  // why HDF5 reads it, when not fast
  // Chunked: the app's own parallel chunk reads, when it decodes every
  // filter (else null, and chunks_why says why HDF5 reads it).
  std::shared_ptr<ChunkReader> chunks;
  std::string chunks_why;
  std::string type_text;
  StorageFacts storage;
  std::size_t element_size = 8;
};

// HDF5's metadata cache (chunk index nodes, object headers) grows to 32 MiB
// by default while a large chunk index is walked; an input's is held to this.
constexpr std::uint64_t kInputMetadataCache = std::uint64_t{4} << 20;

// `path` opened read-only as an input is read (metadata cache held to
// kInputMetadataCache). Refused as input.file is: 66 when it is not HDF5 or
// a writer holds HDF5's lock on it, 65 when it is truncated. `what` names it
// in messages: "input.file 'in.h5'".
h5::Id open_input_file(const std::string& path, const std::string& what);

// Opens dataset `name` of `file` (the HDF5 file of config.file) as the input
// key `key` ("input.discount") names it, of the given rank. Throws
// discount::Error naming the key, file and dataset when it is missing, of
// another rank, of an unsupported type or damaged storage.
DatasetInfo open_input_dataset(hid_t file, const InputConfig& config, const std::string& name, const std::string& key,
                               int rank);

}  // namespace discount
