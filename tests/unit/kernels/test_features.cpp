// The compiled parts (kernels/features.hpp): compute.kernel: blas needs Kokkos Kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernels/apply.hpp"
#include "kernels/features.hpp"
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
#include "kernels/blas.hpp"
#endif
#include "support/kokkos_env.hpp"

using namespace discount;

// A build without Kokkos Kernels refuses compute.kernel: blas with exit 78 and
// names the component; a build with it accepts it. mdrange is always accepted.
TEST(Features, BlasNeedsKokkosKernels) {
  Config config;
  config.source_path = "job.yaml";
  EXPECT_NO_THROW(require_compiled_parts(config));
  config.compute.kernel = KernelKind::blas;
  if (have_kokkos_kernels) {
    EXPECT_NO_THROW(require_compiled_parts(config));
  } else {
    try {
      require_compiled_parts(config);
      ADD_FAILURE() << "blas accepted without Kokkos Kernels";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::config);
      EXPECT_NE(std::string(e.what()).find("job.yaml: compute.kernel: blas needs Kokkos Kernels"), std::string::npos)
          << e.what();
    }
  }
  const std::string parts = compiled_parts_text();
  EXPECT_NE(parts.find(have_kokkos_kernels ? "Kokkos Kernels yes" : "Kokkos Kernels no"), std::string::npos) << parts;
}
