// SIGTERM, SIGINT and SIGUSR1 (Slurm --signal) ask the pipeline to stop after
// the slabs in flight; a second one of them ends the process at once (the
// partial file stays consistent either way). SIGXFSZ is ignored so that a
// file-size limit becomes an EFBIG write error we can report. SIGPIPE is
// ignored: losing stdout or stderr (a closed log pipe) never ends a run; the
// console lines are then dropped (std::cout and stdio keep their error state
// and nothing checks it) while the output file and the exit code stay right.
#pragma once

#include <atomic>

namespace discount {

void install_signal_handlers();
const std::atomic<int>& stop_signal();
const char* signal_name(int signo);

}  // namespace discount
