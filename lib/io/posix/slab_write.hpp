// The one routine that writes a slab's packed values into a file: the real
// output (io/output/output.cpp, each part of a split output) and the write probe
// use it, so the probe measures the path the run takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/posix/box.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

// Writes `runs` (elements of `element` bytes, float64 or float32, of the
// array that starts `base` bytes into the file) from the packed `buffer`:
// through `direct` (O_DIRECT, its own fallbacks) when given, else positional
// page-cache writes on `fd`. Throws io_error with `what` on failure.
// `after` sees each piece of the buffer once, as pwrite_runs describes.
void write_runs_to(int fd, DirectWriter* direct, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                   std::size_t element, const std::string& what, const PieceHook& after = {});

// The box [start, start+count) of an array of extents `dims` at `base`.
void write_box(int fd, DirectWriter* direct, std::uint64_t base, const std::array<std::int64_t, 3>& dims,
               const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, const void* buffer,
               std::size_t element, const std::string& what, const PieceHook& after = {});

}  // namespace discount
