#include "common/gpu_runtime.hpp"

#include <Kokkos_Core.hpp>  // KOKKOS_ENABLE_CUDA, and the CUDA runtime header with it
#include <stdexcept>

namespace discount::gpu {

#ifdef KOKKOS_ENABLE_CUDA

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

#else

bool compiled_in() { return false; }
std::string runtime_name() { return "CUDA"; }
std::string kokkos_backend() { return {}; }
std::string arch_name() { return {}; }
int current_device() { return 0; }
std::uint64_t free_bytes(int) { return 0; }
int device_count() { return 0; }
std::string device_name() { return {}; }
std::int64_t l2_cache_bytes(int) { return 0; }
void check_last_error(const char*) {}
void* create_stream() { return nullptr; }
void destroy_stream(void*) {}
bool register_host(void*, std::size_t, bool) { return false; }
void unregister_host(void*) {}

#endif

}  // namespace discount::gpu
