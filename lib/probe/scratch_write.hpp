// The write probe's copy of the run's write path: one piece's runs written at
// fixed offsets, through the O_DIRECT writer when there is one, else with
// pwrite through the page cache, as the file output writes a slab. Kept apart
// so the probe can switch to the output's own write routine in one place.
#pragma once

#include <string>
#include <vector>

#include "io/box.hpp"
#include "io/posix_io.hpp"

namespace discount {

// `runs` are in elements of `data` (doubles), offsets from the file's byte 0.
// Throws io_error naming `what` on a failed write.
void write_scratch_piece(int fd, DirectWriter* direct, const std::vector<Run>& runs, const double* data,
                         const std::string& what);

}  // namespace discount
