// The Kokkos half of the backend seam: the one header that names a GPU
// backend's Kokkos types (backend/gpu_runtime.hpp is the vendor-runtime
// half). A HIP or SYCL port adds its branch here and its runtime file beside
// cuda_runtime.cpp (docs/architecture.md, "Backends").
//   PinnedHostSpace   page-locked host memory that the GPU copies from and to
//                     at full speed (plain HostSpace without a GPU backend);
//   ExecInstances     execution space instances for the pipeline's stages.
//                     On a GPU each owns a stream, so upload, kernel and
//                     download overlap; Kokkos 3.4 has no partition_space,
//                     and an instance made from a stream does not free it, so
//                     the streams are ours and outlive the instances. Host
//                     spaces use the default instance: no copies to overlap.
#pragma once

#include <Kokkos_Core.hpp>

#include <vector>

#include "backend/gpu_runtime.hpp"

namespace discount {

#ifdef KOKKOS_ENABLE_CUDA
using PinnedHostSpace = Kokkos::CudaHostPinnedSpace;
#else
using PinnedHostSpace = Kokkos::HostSpace;
#endif

template <class ExecSpace>
class ExecInstances {
 public:
  explicit ExecInstances(int count) : instances_(static_cast<std::size_t>(count)) {}
  const ExecSpace& get(int i) const { return instances_[static_cast<std::size_t>(i)]; }

 private:
  std::vector<ExecSpace> instances_;
};

#ifdef KOKKOS_ENABLE_CUDA
template <>
class ExecInstances<Kokkos::Cuda> {
 public:
  explicit ExecInstances(int count) {
    for (int i = 0; i < count; ++i) {
      void* stream = gpu::create_stream();
      if (!stream) Kokkos::abort("discount: cudaStreamCreate failed");
      streams_.push_back(stream);
      instances_.emplace_back(static_cast<cudaStream_t>(stream));
    }
  }
  ~ExecInstances() {
    for (auto& instance : instances_) instance.fence();
    instances_.clear();
    for (auto* stream : streams_) gpu::destroy_stream(stream);
  }
  ExecInstances(const ExecInstances&) = delete;
  ExecInstances& operator=(const ExecInstances&) = delete;
  const Kokkos::Cuda& get(int i) const { return instances_[static_cast<std::size_t>(i)]; }

 private:
  std::vector<void*> streams_;  // gpu::create_stream's handles
  std::vector<Kokkos::Cuda> instances_;
};
#endif

}  // namespace discount
