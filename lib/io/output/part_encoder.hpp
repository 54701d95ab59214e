// output.compression's encoding: contiguous parts stored again as
// compressed chunks, many parts at once. Encoders on every core take the
// parts' chunks in turn (one chunk of each part, then the next of each);
// one thread hands them to HDF5's direct chunk write (HDF5 1.10 is not
// thread-safe), and each part's file is written by a thread of its own
// (h5::DeferredWrites), so that the parts' files fill side by side. Each
// part goes to `<part>.z.tmp`, made durable and renamed over the part once
// whole (part_compress.hpp says why).
#pragma once

#include <array>
#include <cstdint>
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

}  // namespace discount
