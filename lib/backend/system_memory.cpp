#include "backend/system_memory.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <fstream>
#include <sstream>
#include <string>

#include "backend/gpu_runtime.hpp"
#include "common/knobs.hpp"
#include "common/sizes.hpp"

namespace discount {

namespace {

std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) { return 0; }
}

// A field of /proc/self/status in bytes ("VmSize:  123 kB"); 0 if absent.
std::uint64_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    std::uint64_t kib = 0;
    if (key == field && status >> kib) return kib * 1024;
    std::getline(status, key);
  }
  return 0;
}

}  // namespace

AddressSpace address_space() {
  AddressSpace space;
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return space;
  space.limit = limit.rlim_cur;
  space.in_use = status_bytes("VmSize:");
  // Each thread maps a stack of RLIMIT_STACK (8 MiB by default): the host
  // threads Kokkos starts and the pipeline's few; glibc gives threads malloc
  // arenas of 64 MiB of address space each, two at most once capped here.
  rlimit stack{};
  std::uint64_t stack_bytes = std::uint64_t{8} << 20;
  if (::getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY)
    stack_bytes = std::max<std::uint64_t>(stack.rlim_cur, std::uint64_t{2} << 20);
  std::uint64_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char* omp = environment_value("OMP_NUM_THREADS"); omp && std::atoi(omp) > 0)
    threads = static_cast<std::uint64_t>(std::atoi(omp));
  threads += 8;  // reader, writers, stager, the main thread's helpers
  ::mallopt(M_ARENA_MAX, 2);
  space.reserved = threads * stack_bytes + 2 * (std::uint64_t{64} << 20) + (std::uint64_t{96} << 20);
  return space;
}

std::uint64_t host_available_bytes() {
  std::uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") {
      available = kib * 1024;
      break;
    }
  }
  // A cgroup limit below the machine's memory is what the job really has.
  for (auto [limit_path, usage_path] :
       {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const std::uint64_t limit = read_number(limit_path);
    const std::uint64_t usage = read_number(usage_path);
    if (limit > 0 && limit < (std::uint64_t{1} << 60)) {
      const std::uint64_t left = limit > usage ? limit - usage : 0;
      if (available == 0 || left < available) available = left;
      break;
    }
  }
  // Under `ulimit -v` the buffers must fit the address space left as well.
  const AddressSpace space = address_space();
  if (space.limit && (available == 0 || space.room() < available)) {
    available = space.room();
    static bool said = false;
    if (!said) {
      said = true;
      std::cerr << "discount_app: warning: the address-space limit (ulimit -v, RLIMIT_AS) of "
                << format_bytes(space.limit) << " leaves " << format_bytes(available) << " for buffers ("
                << format_bytes(space.in_use) << " mapped now, " << format_bytes(space.reserved)
                << " kept for thread stacks, malloc arenas and libraries); budgets are "
                << "held under it" << std::endl;
    }
  }
  return available;
}

std::uint64_t device_free_bytes(int device) { return gpu::free_bytes(device); }

int visible_devices() { return gpu::device_count(); }

std::string device_name() { return gpu::device_name(); }

}  // namespace discount
