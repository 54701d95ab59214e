// What the host and the device report free, for percentage budgets.
#pragma once

#include <cstdint>

namespace discount {

// MemAvailable, further capped by a cgroup v2/v1 memory limit (Slurm jobs).
std::uint64_t host_available_bytes();
// Free device memory of the current Kokkos device; 0 when there is none.
std::uint64_t device_free_bytes();

}  // namespace discount
