// Applies common/threads.hpp before Kokkos starts: refuses a malformed
// --kokkos-* number (usage error), holds the thread count to the CPUs this
// process may use (and to what the Kokkos backend supports), says so in one
// warning line, and makes the OpenMP runtime, OMP_NUM_THREADS and
// KOKKOS_NUM_THREADS agree with the options handed to Kokkos.
#pragma once

#include <string>
#include <vector>

namespace discount {

// The --kokkos-* options to start Kokkos with.
std::vector<std::string> prepare_kokkos_threads(const std::vector<std::string>& kokkos_args);

// The thread-count option this Kokkos reads (Kokkos 4 renamed --kokkos-threads
// to --kokkos-num-threads).
const char* kokkos_thread_flag();

}  // namespace discount
