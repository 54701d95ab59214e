#include "kernels/features.hpp"

#include <hdf5.h>

#include <Kokkos_Core.hpp>

namespace discount {

std::string compiled_parts_text() {
  const auto yes_no = [](bool b) { return b ? " yes" : " no"; };
#ifdef DISCOUNT_HAVE_MPI
  constexpr bool mpi = true;
#else
  constexpr bool mpi = false;
#endif
#ifdef KOKKOS_ENABLE_CUDA
  constexpr bool cuda = true;
#else
  constexpr bool cuda = false;
#endif
#ifdef H5_HAVE_PARALLEL
  constexpr bool parallel_hdf5 = true;
#else
  constexpr bool parallel_hdf5 = false;
#endif
  return std::string("compiled in: Kokkos Kernels") + yes_no(have_kokkos_kernels) + ", MPI" + yes_no(mpi) +
         ", CUDA" + yes_no(cuda) + ", parallel HDF5" + yes_no(parallel_hdf5);
}

}  // namespace discount
