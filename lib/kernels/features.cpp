#include "kernels/features.hpp"

#include <hdf5.h>

#include "codec/codec.hpp"
#include "backend/gpu_runtime.hpp"

namespace discount {

std::string compiled_parts_text() {
  const auto yes_no = [](bool b) { return b ? " yes" : " no"; };
#ifdef DISCOUNT_HAVE_MPI
  constexpr bool mpi = true;
#else
  constexpr bool mpi = false;
#endif
#ifdef H5_HAVE_PARALLEL
  constexpr bool parallel_hdf5 = true;
#else
  constexpr bool parallel_hdf5 = false;
#endif
  std::string codecs;
  for (int id : {codec::kDeflate, codec::kZstd, codec::kLz4, codec::kBlosc})
    if (codec::implemented(id)) codecs += " " + codec::filter_name(id);
  return std::string("compiled in: Kokkos Kernels") + yes_no(have_kokkos_kernels) + ", MPI" + yes_no(mpi) + ", " +
         gpu::runtime_name() + yes_no(gpu::compiled_in()) + ", parallel HDF5" + yes_no(parallel_hdf5) + ", codecs" +
         codecs;
}

}  // namespace discount
