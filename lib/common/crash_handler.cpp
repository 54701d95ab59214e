#include "common/crash_handler.hpp"

#include <hdf5.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace discount::crash {

namespace {

constexpr std::size_t kDoing = 320;

// The crashing thread's own marker. initial-exec: a plain thread-pointer
// load, safe in a signal handler (no lazy allocation by __tls_get_addr).
__attribute__((tls_model("initial-exec"))) thread_local char t_doing[kDoing];
__attribute__((tls_model("initial-exec"))) thread_local bool t_inside = false;
__attribute__((tls_model("initial-exec"))) thread_local bool t_alt_stack = false;

const char* signal_text(int signo) {
  switch (signo) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "a fatal signal";
  }
}

// Appends `text` to line[0..size) at *used; async-signal-safe.
void append(char* line, std::size_t size, std::size_t* used, const char* text) {
  while (*text && *used + 1 < size) line[(*used)++] = *text++;
  line[*used] = '\0';
}

constexpr const char* kPrefix = "discount_app: error: crashed (";
constexpr const char* kInside = ") inside the HDF5 library while ";
constexpr const char* kDamaged = "; the file is likely damaged: check it with h5dump";
constexpr const char* kBug =
    "); this is a bug, please report it with the command, the YAML and this line (the output's .partial, if any, "
    "is resumable)";

std::size_t format_line(char* line, std::size_t size, int signo, const char* doing) {
  std::size_t used = 0;
  append(line, size, &used, kPrefix);
  append(line, size, &used, signal_text(signo));
  if (doing && *doing) {
    append(line, size, &used, kInside);
    append(line, size, &used, doing);
    append(line, size, &used, kDamaged);
  } else {
    append(line, size, &used, kBug);
  }
  return used;
}

extern "C" void on_fatal_signal(int signo) {
  char line[1024];
  std::size_t used = format_line(line, sizeof line - 1, signo, t_inside ? t_doing : nullptr);
  line[used++] = '\n';
  // A new line first: a progress line redrawn in place may be unfinished.
  const char newline = '\n';
  (void)!::write(STDERR_FILENO, &newline, 1);
  (void)!::write(STDERR_FILENO, line, used);
  // Default action, then the same signal: the exit status names it.
  ::signal(signo, SIG_DFL);
  ::raise(signo);
}

// The alternate stack's memory, given back when its thread ends (the main
// thread's at exit): the stack is switched off first. Never touched by the
// handler, so it may have a destructor.
struct AltStackMemory {
  void* memory = nullptr;
  ~AltStackMemory() {
    if (!memory) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
    std::free(memory);
  }
};
thread_local AltStackMemory t_alt_stack_memory;

void give_thread_alt_stack() {
  if (t_alt_stack) return;
  t_alt_stack = true;
  // Enough for the handler and the kernel's frame; kept for the thread's
  // life (a few threads per process, 64 KiB each).
  const std::size_t size = 64 * 1024;
  stack_t stack{};
  stack.ss_sp = std::malloc(size);
  if (!stack.ss_sp) return;
  stack.ss_size = size;
  stack.ss_flags = 0;
  if (::sigaltstack(&stack, nullptr) != 0)
    std::free(stack.ss_sp);
  else
    t_alt_stack_memory.memory = stack.ss_sp;
}

}  // namespace

void install_handler() {
  static bool installed = false;
  give_thread_alt_stack();
  if (installed) return;
  installed = true;
  // Before HDF5's first call: no clean-up of the library at exit. A damaged
  // input can leave objects HDF5 cannot close, and its exit-time clean-up
  // then prints "infinite loop closing library" after our one error line.
  // Every file is closed explicitly before the process exits.
  H5dont_atexit();
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
  for (int signo : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(signo, &action, nullptr);
}

InsideHdf5::InsideHdf5(const std::string& doing) : was_inside_(t_inside) {
  give_thread_alt_stack();
  std::memcpy(saved_, t_doing, kDoing);
  // Cut short on a whole byte count; the line stays one line.
  std::size_t n = 0;
  for (; n < doing.size() && n + 1 < kDoing; ++n) t_doing[n] = doing[n] == '\n' ? ' ' : doing[n];
  t_doing[n] = '\0';
  t_inside = true;
}

InsideHdf5::~InsideHdf5() {
  std::memcpy(t_doing, saved_, kDoing);
  t_inside = was_inside_;
}

std::string crash_line(int signo, const std::string& doing) {
  char line[1024];
  format_line(line, sizeof line, signo, doing.c_str());
  return line;
}

}  // namespace discount::crash
