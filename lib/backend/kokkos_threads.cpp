#include "backend/kokkos_threads.hpp"

#include <Kokkos_Core.hpp>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <iostream>
#include <thread>

#include "common/affinity.hpp"
#include "common/knobs.hpp"
#include "common/threads.hpp"
#include "ranks/ranks.hpp"

namespace discount {

namespace {

// Kokkos' OpenMP backend keeps per-thread data in a fixed array of 512
// entries (Kokkos 3.4's OpenMPExec, and its successors' OpenMPInternal);
// more threads than that overrun it: SIGSEGV in disband_pool.
int kokkos_thread_cap() {
#if defined(KOKKOS_ENABLE_OPENMP)
  return 512;
#else
  return 0;
#endif
}

}  // namespace

const char* kokkos_thread_flag() { return KOKKOS_VERSION >= 40000 ? "--kokkos-num-threads" : "--kokkos-threads"; }

std::vector<std::string> prepare_kokkos_threads(const std::vector<std::string>& kokkos_args) {
  check_kokkos_args(kokkos_args);
  int cpus = process_cpu_count();
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  // Several ranks on a node share its CPUs (ranks::kokkos_rank_args) when
  // nothing asks otherwise; the cap matters only when a share exceeds it.
  const int share = ranks::local_size() > 1 ? ranks::threads_per_rank(cpus, job_cpu_count()) : cpus;
  ThreadLimit limit = limit_threads(kokkos_args, environment_value("KOKKOS_NUM_THREADS"),
                                    environment_value("OMP_NUM_THREADS"), cpus, kokkos_thread_cap());
  if (!limit.requested && share > 0 && share < cpus)
    limit = limit_threads({}, nullptr, nullptr, share, kokkos_thread_cap());
  if (!limit.warning.empty() && ranks::is_root()) std::cerr << "discount_app: warning: " << limit.warning << std::endl;
  if (limit.threads <= 0) return kokkos_args;
  const std::string count = std::to_string(limit.threads);
  // Kokkos 3 refuses a KOKKOS_NUM_THREADS that differs from the option;
  // child processes (and the OpenMP runtime, when Kokkos leaves it alone)
  // see the count actually used.
  if (environment_value("KOKKOS_NUM_THREADS")) ::setenv("KOKKOS_NUM_THREADS", count.c_str(), 1);
  if (environment_value("OMP_NUM_THREADS")) ::setenv("OMP_NUM_THREADS", count.c_str(), 1);
#ifdef _OPENMP
  // Kokkos' first parallel region would otherwise start the runtime's count
  // (read from OMP_NUM_THREADS when the program loaded) before taking ours.
  omp_set_num_threads(limit.threads);
#endif
  return with_thread_flag(kokkos_args, kokkos_thread_flag(), limit.threads);
}

}  // namespace discount
