// SIGTERM, SIGINT and SIGUSR1 (Slurm --signal) ask the pipeline to stop after
// the slabs in flight; a second one of them ends the process at once (the
// partial file stays consistent either way). SIGXFSZ is ignored so that a
// file-size limit becomes an EFBIG write error we can report.
#pragma once

#include <atomic>

namespace discount {

void install_signal_handlers();
const std::atomic<int>& stop_signal();
const char* signal_name(int signo);

}  // namespace discount
