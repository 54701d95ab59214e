// With OMP_PROC_BIND set, the OpenMP runtime pins the main thread to one core
// when Kokkos starts. Threads spawned later inherit that single core, so the
// pipeline's reader, copy and writer threads (and their I/O helpers) would all
// share it with the kernel's master thread. Each such thread calls this first
// to take back the CPU set the process started with.
#pragma once

namespace discount {

void use_process_affinity();

}  // namespace discount
