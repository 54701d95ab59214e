// Where the values of one range of units (along the chunk axis) lie: the
// master's own dataset (single layout) or one part file (split). Every write
// of a slab's box goes through write_box: positional writes at the dataset's
// offset, or the BoxWriter attached for the run (HDF5's MPI-IO driver).
#pragma once

#include <hdf5.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/range.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

// Writes a box of a dataset some other way than positional writes on the
// data file's descriptor (output_mpio.hpp's MpioDataset).
class BoxWriter {
 public:
  virtual ~BoxWriter() = default;
  // The box [start, start+count) of the dataset from the packed `buffer`.
  virtual void write_box(const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                         const void* buffer) = 0;
  // Ends the writes, reporting a failure to close (throws io_error).
  virtual void close() = 0;
};

struct DataFile {
  Range units;
  std::string path;
  std::array<std::int64_t, 3> dims{};  // the dataset's extents in this file
  std::uint64_t offset = 0;            // its bytes' offset in the file
  UniqueFd fd;
  std::unique_ptr<DirectWriter> direct;  // when spec.direct_io
  BoxWriter* writer = nullptr;           // when set (its owner outlives the writes), every box goes through it
  std::atomic<bool> dirty{false};        // written since its last fdatasync
  // A finished part already stored compressed (part_compress.hpp): read
  // through HDF5, never written again.
  bool compressed = false;
  h5::Id h5_file, h5_data;

  // Writes the box of `element`-byte values from the packed `buffer` and
  // marks the file dirty; `hook` sees each piece when hooks_while_writing().
  void write_box(const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, const void* buffer,
                 std::size_t element, const PieceHook& hook = {});
  // Whether write_box calls its hook piece by piece as it writes.
  bool hooks_while_writing() const { return !writer && (!direct || direct->hooks_while_writing()); }
  // Written through the page cache on `fd` (not O_DIRECT, not a BoxWriter).
  bool page_cache() const { return !writer && !(direct && direct->active()); }
};

}  // namespace discount
