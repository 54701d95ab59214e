// Thread counts and Kokkos' numeric options, checked before Kokkos starts:
// Kokkos 3 turns a malformed `--kokkos-threads=abc` into std::stoi's
// exception, and its OpenMP backend keeps at most 512 threads' data, so
// OMP_NUM_THREADS=1000 ended in SIGSEGV. Pure: the caller passes the
// environment and the CPU count in, and applies the result
// (backend/kokkos_threads.hpp).
#pragma once

#include <string>
#include <vector>

namespace discount {

// Refuses (usage_error, naming the flag) a --kokkos-* option that takes a
// number (threads, numa, device id, number of devices) when its value is not
// one, or is negative. Other --kokkos-* options are left to Kokkos.
void check_kokkos_args(const std::vector<std::string>& args);

// The thread count a job asks for and what it may have.
struct ThreadLimit {
  int threads = 0;         // start Kokkos with this many threads; 0: leave Kokkos' own choice alone
  std::string warning;     // one line when a request was lowered; empty otherwise
  bool requested = false;  // by an option or the environment (else only the cap lowered it)
};

// The request: --kokkos-threads / --kokkos-num-threads, else KOKKOS_NUM_THREADS
// (`kokkos_env`, null if unset), else OMP_NUM_THREADS (`omp_env`: its first
// level; a value the OpenMP runtime rejects, such as 0, -4 or abc, is ignored
// as the runtime ignores it), else every usable CPU. It is held to
// `usable_cpus` (the CPUs this process may run on) and `kokkos_cap` (the most
// threads the Kokkos backend supports; 0: no cap). A KOKKOS_NUM_THREADS that
// is not a whole number is refused (usage_error), as Kokkos would refuse it.
ThreadLimit limit_threads(const std::vector<std::string>& kokkos_args, const char* kokkos_env, const char* omp_env,
                          int usable_cpus, int kokkos_cap);

// `args` without any thread-count option, then `flag`=threads.
std::vector<std::string> with_thread_flag(const std::vector<std::string>& args, const std::string& flag, int threads);

// True for --kokkos-threads=... and --kokkos-num-threads=...
bool is_thread_flag(const std::string& arg);

}  // namespace discount
