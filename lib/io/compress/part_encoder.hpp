// output.compression's encoding: contiguous parts stored again as
// compressed chunks. Encoders on every core take the chunks as they become
// ready; one thread hands them to HDF5's direct chunk write (HDF5 1.10 is not
// thread-safe), and each part's file is written by a thread of its own
// (h5::DeferredWrites), so that the parts' files fill side by side. Each
// part goes to `<part>.z.tmp`, made durable and renamed over the part once
// whole and once every unit of the part is recorded durable
// (part_compress.hpp says why).
//
// Two ways in: PartStream follows a run as it writes (one process), a chunk
// encoded as soon as the units it covers hold their values, so that the
// cores compress while the GPU multiplies and the I/O threads move slabs;
// compress_parts() takes finished parts (a resume with nothing left to
// write, or each rank's share under MPI).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/records/compress_stats.hpp"

namespace discount {

struct PartToCompress {
  std::string path;                    // the contiguous part, dataset "cv"
  std::array<std::int64_t, 3> dims{};  // its shape, the output's axis order
};

// Compresses `parts` in place, at most one part per encoding thread at a
// time. Throws io_error naming the part; the parts not yet renamed stay
// contiguous and whole, their temporary files removed.
CompressStats compress_parts(const std::vector<PartToCompress>& parts, OutputType dtype, const CompressionConfig& z);

class PartEncoder;

class PartStream {
 public:
  // Opens `<part>.z.tmp` for each of `parts` and starts the threads; throws
  // io_error naming a part whose file cannot be made. `unit_axis`: the
  // position of the chunk axis in the parts' dims. `before_rename(i)` runs on
  // the stream's HDF5 thread just before part i is replaced (the caller lets
  // go of its handles on it).
  PartStream(const std::vector<PartToCompress>& parts, int unit_axis, OutputType dtype, const CompressionConfig& z,
             std::function<void(std::size_t)> before_rename);
  // Stops the threads; every `.z.tmp` not renamed is removed, its part stays
  // contiguous.
  ~PartStream();
  PartStream(const PartStream&) = delete;
  PartStream& operator=(const PartStream&) = delete;

  // Units [begin, end) of part i (counted from the part's first) hold their
  // values in the part's file. Thread-safe.
  void written(std::size_t i, std::int64_t begin, std::int64_t end);
  // Every unit of part i is recorded durable: once its chunks are stored,
  // it may be renamed. Thread-safe.
  void durable(std::size_t i);
  // Waits until every part is renamed (each must have been written whole and
  // made durable); the figures, `tail_seconds` the time waited here. Throws
  // the first error (io_error naming the part).
  CompressStats finish();

 private:
  std::unique_ptr<PartEncoder> encoder_;
};

}  // namespace discount
