// The executable's .preinit_array entry that runs capture_start_mask
// (common/affinity.hpp) before any shared library's constructor. In a file of
// its own: a shared library may not have a .preinit_array, so executables
// pull this object out of the static library by its symbol
// (lib/CMakeLists.txt: --undefined for executables only) and the Python
// module leaves it out (its process's start mask is then the cpuset's).
#include "common/affinity.hpp"

// External linkage, so no compiler drops it as unreferenced.
__attribute__((section(".preinit_array"),
               used)) void (*discount_capture_start_mask)(int, char**, char**) = discount::capture_start_mask;
