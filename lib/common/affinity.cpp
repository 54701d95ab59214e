#include "common/affinity.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace discount {

namespace {

// "0-15,32-47" -> set; false if the text is not such a list.
bool parse_cpu_list(const std::string& text, cpu_set_t& set) {
  CPU_ZERO(&set);
  std::stringstream items(text);
  std::string item;
  bool any = false;
  while (std::getline(items, item, ',')) {
    if (item.empty() || item == "\n") continue;
    const auto dash = item.find('-');
    try {
      const int first = std::stoi(item.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(item.substr(dash + 1));
      for (int cpu = first; cpu <= last && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &set);
      any = true;
    } catch (...) { return false; }
  }
  return any;
}

// The CPUs the job may use. Not the main thread's mask: libgomp's load-time
// constructor has already pinned it when OMP_PROC_BIND is set. The cgroup's
// cpuset (what Slurm grants) when readable, else every online CPU.
struct JobCpus {
  cpu_set_t set;
  bool valid = false;
  JobCpus() {
    for (const char* path : {"/sys/fs/cgroup/cpuset.cpus.effective", "/sys/fs/cgroup/cpuset/cpuset.effective_cpus",
                             "/sys/fs/cgroup/cpuset/cpuset.cpus"}) {
      std::ifstream in(path);
      std::string text;
      if (in >> text && parse_cpu_list(text, set)) {
        valid = true;
        return;
      }
    }
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&set);
    for (long cpu = 0; cpu < online && cpu < CPU_SETSIZE; ++cpu) CPU_SET(static_cast<int>(cpu), &set);
    valid = online > 0;
  }
};

// The mask the process started with, read before any shared library's
// constructor (libgomp's narrows the main thread when OMP_PROC_BIND is set):
// functions in an executable's .preinit_array run first.
cpu_set_t g_start_mask;
bool g_start_mask_valid = false;

// The start mask within the job's cpuset; the cpuset alone when the mask
// was not captured (the code runs inside a shared library, say).
struct UsableCpus {
  cpu_set_t set;
  bool valid = false;
  UsableCpus() {
    const JobCpus job;
    CPU_ZERO(&set);
    if (g_start_mask_valid && job.valid) CPU_AND(&set, &g_start_mask, &job.set);
    if (g_start_mask_valid && job.valid && CPU_COUNT(&set) > 0) {
      valid = true;
    } else if (job.valid) {
      set = job.set;
      valid = true;
    }
  }
};

const UsableCpus& usable_cpus() {
  static const UsableCpus cpus;
  return cpus;
}

}  // namespace

// Called from the executable's .preinit_array (common/affinity_preinit.cpp;
// a shared library such as the Python module may not have one).
void capture_start_mask(int, char**, char**) {
  CPU_ZERO(&g_start_mask);
  g_start_mask_valid = ::sched_getaffinity(0, sizeof g_start_mask, &g_start_mask) == 0;
}

void use_process_affinity() {
  const UsableCpus& cpus = usable_cpus();
  if (cpus.valid) pthread_setaffinity_np(pthread_self(), sizeof cpus.set, &cpus.set);
}

int job_cpu_count() {
  static const JobCpus job;
  return job.valid ? CPU_COUNT(&job.set) : 0;
}

int process_cpu_count() {
  const UsableCpus& cpus = usable_cpus();
  return cpus.valid ? CPU_COUNT(&cpus.set) : 0;
}

}  // namespace discount
