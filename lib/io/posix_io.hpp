// Positional reads and writes of box runs at a dataset's file offset, spread
// over a few threads: one stream of page-cache copies is slower than the disk
// on the nodes we target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/box.hpp"

namespace discount {

// Moves the runs (element units of `element_bytes`) between the file at
// `base` bytes and the packed buffer. Throws discount::Error (io_error) with
// `what` and the OS reason on failure.
void pread_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, void* buffer, std::size_t element_bytes,
                const std::string& what);
void pwrite_runs(int fd, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                 std::size_t element_bytes, const std::string& what);

}  // namespace discount
