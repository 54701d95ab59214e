// A fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) still ends the
// process with that signal, but first prints one line on stderr: when the
// crashing thread was inside an HDF5 call on an input (a damaged file can make
// libhdf5 read past its buffers), which file and dataset, and that the file
// is likely damaged; otherwise that this is a bug. The handler only calls
// write(2), runs on an alternate stack (a stack overflow still prints) and
// then re-raises the signal with its default action, so the exit status
// names the signal. Nothing is cleaned up: the output's lock is released by
// the kernel, and its .partial stays resumable.
#pragma once

#include <string>

namespace discount::crash {

// Installs the handler for the fatal signals and an alternate signal stack
// for the calling thread, and turns off HDF5's clean-up at exit (see the
// .cpp). Call it first thing in main. Idempotent.
void install_handler();

// While one exists on a thread, a crash on that thread is reported as one
// inside the HDF5 library "while <doing>", e.g. "reading dataset 'discount'
// of file 'in.h5'". The text is formatted now, into this thread's fixed
// buffer (cut short when long), so the handler needs no allocation. Scopes
// nest: the innermost one's text is shown. Also gives the thread an
// alternate signal stack, once.
class InsideHdf5 {
 public:
  explicit InsideHdf5(const std::string& doing);
  ~InsideHdf5();
  InsideHdf5(const InsideHdf5&) = delete;
  InsideHdf5& operator=(const InsideHdf5&) = delete;

 private:
  char saved_[320];
  bool was_inside_;
};

// The line the handler prints for `signo` (without the newline), given what
// the thread was doing inside HDF5 (empty: not inside HDF5). For unit tests;
// the handler formats the same words without allocating.
std::string crash_line(int signo, const std::string& doing);

}  // namespace discount::crash
