#include "io/posix/slab_write.hpp"

namespace discount {

void write_runs_to(int fd, DirectWriter* direct, std::uint64_t base, const std::vector<Run>& runs, const void* buffer,
                   std::size_t element, const std::string& what, const PieceHook& after) {
  if (direct)
    direct->write_runs(fd, base, runs, buffer, element, what, after);
  else
    pwrite_runs(fd, base, runs, buffer, element, what, after);
}

void write_box(int fd, DirectWriter* direct, std::uint64_t base, const std::array<std::int64_t, 3>& dims,
               const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count, const void* buffer,
               std::size_t element, const std::string& what, const PieceHook& after) {
  write_runs_to(fd, direct, base, box_runs(dims, start, count), buffer, element, what, after);
}

}  // namespace discount
