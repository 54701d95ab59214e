// Execution space instances for the pipeline's stages. On CUDA each instance
// owns a stream, so upload, kernel and download overlap; Kokkos 3.4 has no
// partition_space, and Kokkos::Cuda(stream) does not free the stream, so the
// streams are ours and outlive the instances. Host spaces use the default
// instance: there are no copies to overlap.
#pragma once

#include <Kokkos_Core.hpp>

#include "common/gpu_runtime.hpp"

#include <type_traits>
#include <vector>

namespace discount {

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
