#include "common/affinity.hpp"

#include <pthread.h>
#include <sched.h>

namespace discount {

namespace {

struct InitialMask {
  cpu_set_t set;
  bool valid = false;
  InitialMask() {
    CPU_ZERO(&set);
    valid = sched_getaffinity(0, sizeof set, &set) == 0;
  }
};

// Read during static initialisation, before main and before any OpenMP runtime binds threads.
const InitialMask& initial_mask() {
  static const InitialMask mask;
  return mask;
}
const InitialMask& g_captured_at_startup = initial_mask();

}  // namespace

void use_process_affinity() {
  const InitialMask& mask = initial_mask();
  if (mask.valid) pthread_setaffinity_np(pthread_self(), sizeof mask.set, &mask.set);
}

}  // namespace discount
