#include "probe/scratch_write.hpp"

namespace discount {

void write_scratch_piece(int fd, DirectWriter* direct, const std::vector<Run>& runs, const double* data,
                         const std::string& what) {
  if (direct) direct->write_runs(fd, 0, runs, data, sizeof(double), what);
  else pwrite_runs(fd, 0, runs, data, sizeof(double), what);
}

}  // namespace discount
