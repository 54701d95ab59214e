// What the host and the device report free, for percentage budgets.
#pragma once

#include <cstdint>
#include <string>

namespace discount {

// MemAvailable, further capped by a cgroup v2/v1 memory limit (Slurm jobs).
std::uint64_t host_available_bytes();
// Free memory of GPU `device` (before Kokkos starts; it becomes the current
// device); 0 when there is none.
std::uint64_t device_free_bytes(int device = 0);
// GPUs this process can see (CUDA_VISIBLE_DEVICES applied); 0 without CUDA.
int visible_devices();
// Name of the current GPU ("NVIDIA H200"); empty without CUDA.
std::string device_name();
// This machine's host name.
std::string host_name();

}  // namespace discount
