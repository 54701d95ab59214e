// With OMP_PROC_BIND set, the OpenMP runtime pins the main thread to one core
// (at load time). Threads spawned later inherit that single core, so the
// pipeline's reader, copy and writer threads (and their I/O helpers) would all
// share it with the kernel's master thread. Each such thread calls this first
// to spread over the CPUs the job may use (its cgroup cpuset, else all).
#pragma once

namespace discount {

void use_process_affinity();

}  // namespace discount
