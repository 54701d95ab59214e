// Optional parts compiled into this build, and the refusal of a config that
// needs one that is missing (before any I/O: resolve's check_config calls it
// with the other cross-field checks; the pipeline calls it again for direct users).
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

// Throws config_error (exit 78) naming the missing component; `where` (the
// config file) prefixes the message when known.
inline void require_kernel_compiled_in(KernelKind kernel, const std::string& where = {}) {
  if (kernel == KernelKind::blas && !have_kokkos_kernels)
    throw config_error((where.empty() ? std::string() : where + ": ") +
                       "compute.kernel: blas needs Kokkos Kernels, which this build does not include "
                       "(rebuild with it found, or use kernel: mdrange)");
}
inline void require_compiled_parts(const Config& config) {
  require_kernel_compiled_in(config.compute.kernel, config.source_path);
}

// One line: "compiled in: Kokkos Kernels yes, MPI no, CUDA yes, parallel HDF5
// no, codecs deflate zstd lz4 blosc" (the codecs lib/codec encodes and decodes).
std::string compiled_parts_text();

}  // namespace discount
