// Optional parts compiled into this build, and the refusal of a config that
// needs one that is missing (before any I/O: pipeline/job.cpp calls it with
// the other cross-field checks; the pipeline calls it again for direct users).
#pragma once

#include <string>

#include "common/error.hpp"
#include "config/config.hpp"

namespace discount {

#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
inline constexpr bool have_kokkos_kernels = true;
#else
inline constexpr bool have_kokkos_kernels = false;
#endif

// Throws config_error (exit 78) naming the missing component.
inline void require_compiled_parts(const Config& config) {
  if (config.compute.kernel == KernelKind::blas && !have_kokkos_kernels)
    throw config_error((config.source_path.empty() ? std::string() : config.source_path + ": ") +
                       "compute.kernel: blas needs Kokkos Kernels, which this build does not include "
                       "(rebuild with it found, or use kernel: mdrange)");
}

// One line: "compiled in: Kokkos Kernels yes, MPI no, CUDA yes, parallel HDF5 no".
std::string compiled_parts_text();

}  // namespace discount
