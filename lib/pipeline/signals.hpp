// SIGTERM, SIGINT, SIGUSR1 (Slurm --signal) and SIGHUP (a closed terminal or
// a lost SSH session; left ignored under `nohup`) ask the pipeline to stop
// after the slabs in flight. A second one of them while it stops ends the
// process at once, killed by that signal's default action (exit status 128 +
// its number, e.g. 143 for SIGTERM); the partial file stays consistent and
// resumable either way. SIGXFSZ is ignored so that a file-size limit becomes
// an EFBIG write error we can report. SIGPIPE is ignored: losing stdout or
// stderr (a closed log pipe) never ends a run; the console lines are then
// dropped (std::cout and stdio keep their error state and nothing checks it)
// while the output file and the exit code stay right.
#pragma once

#include <atomic>

namespace discount {

void install_signal_handlers();
const std::atomic<int>& stop_signal();
const char* signal_name(int signo);

}  // namespace discount
