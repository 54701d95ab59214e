// With OMP_PROC_BIND set, the OpenMP runtime pins the main thread to one core
// (at load time). Threads spawned later inherit that single core, so the
// pipeline's reader, copy and writer threads (and their I/O helpers) would all
// share it with the kernel's master thread. Each such thread calls this first
// to spread over the CPUs the job may use: the CPU mask the process started
// with (what a launcher such as srun --cpu-bind or mpirun --bind-to gave it,
// captured before any library constructor runs), within the cgroup cpuset.
#pragma once

namespace discount {

void use_process_affinity();
// CPUs in that mask (0 if unknown).
int process_cpu_count();
// CPUs of the job's cpuset (cgroup), else every online CPU (0 if unknown).
int job_cpu_count();

// Records the CPU mask the process starts with; run from an executable's
// .preinit_array (common/affinity_preinit.cpp), before any library constructor.
void capture_start_mask(int, char**, char**);

}  // namespace discount
