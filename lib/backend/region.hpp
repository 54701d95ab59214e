// A named Kokkos Tools region for the current scope: kokkos-tools
// (space-time-stack, kernel timer) and Nsight Systems (through the NVTX
// connector) show the pipeline's stages by these names (docs/performance.md,
// "Seeing the stages"). Kokkos 4.1 and later have their own RAII region; on
// older releases (3.4.01) the scope pushes and pops by hand. Regions belong
// to the thread that pushes them (the tools keep one stack per thread), so a
// Region must end on the thread that began it: keep it a local variable of a
// scope that runs on one thread. Costs nothing measurable without a tool
// (one branch on a null callback).
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

#if KOKKOS_VERSION >= 40100 && defined(__has_include)
#if __has_include(<Kokkos_Profiling_ScopedRegion.hpp>)
#include <Kokkos_Profiling_ScopedRegion.hpp>
#define DISCOUNT_KOKKOS_SCOPED_REGION 1
#endif
#endif

namespace discount {

#ifdef DISCOUNT_KOKKOS_SCOPED_REGION
class Region {
 public:
  explicit Region(const std::string& name) : region_(name) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  Kokkos::Profiling::ScopedRegion region_;
};
#else
class Region {
 public:
  explicit Region(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~Region() { Kokkos::Profiling::popRegion(); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
};
#endif

}  // namespace discount
