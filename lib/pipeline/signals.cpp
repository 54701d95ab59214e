#include "pipeline/signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <initializer_list>

namespace discount {

namespace {
std::atomic<int> g_stop{0};

extern "C" void on_stop_signal(int signo) {
  int expected = 0;
  if (!g_stop.compare_exchange_strong(expected, signo)) {
    ::signal(signo, SIG_DFL);
    ::raise(signo);
  }
}
}  // namespace

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signo : {SIGTERM, SIGINT, SIGUSR1}) ::sigaction(signo, &action, nullptr);
  // A hang-up (closed terminal, lost SSH session) stops the run like SIGTERM,
  // unless it was started to outlive one (`nohup` leaves SIGHUP ignored).
  struct sigaction hangup {};
  if (::sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN) ::sigaction(SIGHUP, &action, nullptr);
  ::signal(SIGXFSZ, SIG_IGN);
  // A log pipe that goes away (`| head`, a dead `tee`) must not end the job:
  // writes to it then fail with EPIPE, which every console write ignores.
  ::signal(SIGPIPE, SIG_IGN);
}

const std::atomic<int>& stop_signal() { return g_stop; }

const char* signal_name(int signo) {
  switch (signo) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

}  // namespace discount
