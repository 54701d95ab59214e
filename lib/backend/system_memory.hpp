// What the host and the device report free, for percentage budgets.
#pragma once

#include <cstdint>
#include <string>

#include "common/host.hpp"  // host_name, declared here before it moved to common/

namespace discount {

// MemAvailable, further capped by a cgroup v2/v1 memory limit (Slurm jobs)
// and by what an address-space limit (RLIMIT_AS, `ulimit -v`) leaves for
// buffers (address_space_room). The first time the address-space limit is
// the tighter one, one line on stderr says so.
std::uint64_t host_available_bytes();

// What RLIMIT_AS leaves for the run's buffers: the limit less the address
// space in use now and what the run will still map besides its buffers (a
// stack per thread, Kokkos and HDF5, glibc's per-thread malloc arenas,
// which it caps at two while a limit is set). 0 when there is no limit.
struct AddressSpace {
  std::uint64_t limit = 0;     // RLIMIT_AS soft limit; 0: unlimited
  std::uint64_t in_use = 0;    // VmSize now
  std::uint64_t reserved = 0;  // stacks, arenas, libraries still to come
  std::uint64_t room() const { return limit > in_use + reserved ? limit - in_use - reserved : 1; }
};
AddressSpace address_space();
// Free memory of GPU `device` (before Kokkos starts; it becomes the current
// device); 0 when there is none.
std::uint64_t device_free_bytes(int device = 0);
// GPUs this process can see (CUDA_VISIBLE_DEVICES applied); 0 without CUDA.
int visible_devices();
// Name of the current GPU ("NVIDIA H200"); empty without CUDA.
std::string device_name();

}  // namespace discount
