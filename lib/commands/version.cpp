#include <hdf5.h>

#include <Kokkos_Core.hpp>
#include <string>

#include "commands/commands.hpp"
#include "backend/gpu_runtime.hpp"
#include "kernels/features.hpp"
#include "ranks/ranks.hpp"

#ifndef DISCOUNT_VERSION
#define DISCOUNT_VERSION "0.0.0"
#endif
#include "git_hash.hpp"  // generated at build time: DISCOUNT_GIT_HASH

namespace discount {

std::string version_text() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::string backends;
  if (gpu::compiled_in()) backends += " " + gpu::kokkos_backend();
#ifdef KOKKOS_ENABLE_OPENMP
  backends += " OpenMP";
#endif
#ifdef KOKKOS_ENABLE_THREADS
  backends += " Threads";
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  backends += " Serial";
#endif
  const std::string gpu_arch = gpu::arch_name();
  const std::string arch = gpu_arch.empty() ? "" : " (GPU arch " + gpu_arch + ")";
  std::string hdf5_flavour;
#ifdef H5_HAVE_PARALLEL
  hdf5_flavour = " (parallel)";
#endif
  const std::string mpi = ranks::built_with_mpi() ? "MPI build, " + std::to_string(ranks::size()) + " rank(s)\n" : "";
  return std::string("discount_app ") + DISCOUNT_VERSION + " (git " + DISCOUNT_GIT_HASH + ")\n" + "Kokkos " +
         std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100) + ", backends:" + backends + arch + "\n" + "HDF5 " +
         std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release) + hdf5_flavour + "\n" +
         mpi + compiled_parts_text() + "\n";
}

}  // namespace discount
