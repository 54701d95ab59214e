#include "pipeline/system_memory.hpp"


#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/gpu_runtime.hpp"

namespace discount {

namespace {

std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

}  // namespace

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
  for (auto [limit_path, usage_path] : {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
                                        std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                                  "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const std::uint64_t limit = read_number(limit_path);
    const std::uint64_t usage = read_number(usage_path);
    if (limit > 0 && limit < (std::uint64_t{1} << 60)) {
      const std::uint64_t left = limit > usage ? limit - usage : 0;
      if (available == 0 || left < available) available = left;
      break;
    }
  }
  return available;
}

std::uint64_t device_free_bytes(int device) { return gpu::free_bytes(device); }

int visible_devices() { return gpu::device_count(); }

std::string device_name() { return gpu::device_name(); }

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}


}  // namespace discount
