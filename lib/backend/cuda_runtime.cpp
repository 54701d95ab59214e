// The GPU runtime on CUDA (backend/gpu_runtime.hpp): built where Kokkos
// has its CUDA backend (lib/backend/CMakeLists.txt picks this file).
#include <Kokkos_Core.hpp>  // KOKKOS_ENABLE_CUDA, and the CUDA runtime header with it
#include <stdexcept>

#include "backend/gpu_runtime.hpp"

#ifndef KOKKOS_ENABLE_CUDA
#error "cuda_runtime.cpp needs Kokkos's CUDA backend; a build without a GPU takes host_runtime.cpp"
#endif

namespace discount::gpu {

bool compiled_in() { return true; }
std::string runtime_name() { return "CUDA"; }
std::string kokkos_backend() { return "Cuda"; }

std::string arch_name() {
#if defined(KOKKOS_ARCH_HOPPER90)
  return "sm_90";
#elif defined(KOKKOS_ARCH_AMPERE80)
  return "sm_80";
#else
  return {};
#endif
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess) return device;
  return 0;
}

std::uint64_t free_bytes(int device) {
  std::size_t free = 0, total = 0;
  if (cudaSetDevice(device) == cudaSuccess && cudaMemGetInfo(&free, &total) == cudaSuccess) return free;
  return 0;
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess) return count;
  return 0;
}

std::string device_name() {
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&properties, device) == cudaSuccess)
    return properties.name;
  return {};
}

std::int64_t l2_cache_bytes(int device) {
  int bytes = 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) == cudaSuccess) return bytes;
  (void)cudaGetLastError();  // not sticky; clear it so that check_last_error does not report it
  return 0;
}

void check_last_error(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": CUDA error " + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status));
}

void* create_stream() {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  return stream;
}

void destroy_stream(void* stream) { cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }

bool register_host(void* data, std::size_t bytes, bool portable) {
  if (cudaHostRegister(data, bytes, portable ? cudaHostRegisterPortable : cudaHostRegisterDefault) == cudaSuccess)
    return true;
  (void)cudaGetLastError();  // not sticky: clear it so that check_last_error does not report it
  return false;
}

void unregister_host(void* data) { cudaHostUnregister(data); }

}  // namespace discount::gpu
