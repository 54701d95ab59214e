// Every call into the GPU vendor's runtime, in one place: declared here,
// defined once per vendor (cuda_runtime.cpp) and once for a build without a
// GPU (host_runtime.cpp, where each function answers "no GPU": 0, empty,
// false). backend/spaces.hpp, the only other file that names a GPU backend,
// holds the Kokkos types (execution space instances on streams, pinned host
// memory). A HIP or SYCL port adds hip_runtime.cpp (or sycl_runtime.cpp),
// its case in spaces.hpp and lib/backend/CMakeLists.txt, and a preset
// (docs/architecture.md, "Backends"). No Kokkos here: pure declarations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// True in a GPU compiler's device pass, where host-only code (x86
// intrinsics) must not be seen.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
#define DISCOUNT_DEVICE_PASS 1
#else
#define DISCOUNT_DEVICE_PASS 0
#endif
// True when a GPU compiler driver (nvcc, hipcc) compiles this unit, whose
// front end may not take every GCC pragma.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define DISCOUNT_GPU_COMPILER 1
#else
#define DISCOUNT_GPU_COMPILER 0
#endif

namespace discount::gpu {

// True when the build has a GPU backend.
bool compiled_in();
// The vendor runtime's name for `--version` ("CUDA"), the same in a build
// without it ("compiled in: ... CUDA no").
std::string runtime_name();
// Kokkos's name of the GPU execution space compiled in ("Cuda"); empty without one.
std::string kokkos_backend();
// The GPU architecture the build targets ("sm_90"); empty when not known.
std::string arch_name();

// Free memory of `device` in bytes (it becomes the current device); 0 without one.
std::uint64_t free_bytes(int device);
// GPUs this process can see (CUDA_VISIBLE_DEVICES applied); 0 without a GPU backend.
int device_count();
// The calling thread's current device (Kokkos sets it on the thread that
// initialises it, which runs the kernels); 0 without one.
int current_device();
// Name of the current GPU ("NVIDIA H200"); empty without one.
std::string device_name();
// L2 cache size of `device` in bytes; 0 when unknown (the error is cleared).
std::int64_t l2_cache_bytes(int device);
// Throws std::runtime_error naming `what` when a launch or kernel failed since
// the last call (the runtime's last error, which this call clears).
void check_last_error(const char* what);

// A non-blocking stream, as an opaque handle; nullptr when the runtime
// refuses it or there is no GPU backend.
void* create_stream();
void destroy_stream(void* stream);

// Page-locks [data, data + bytes) of ordinary host memory, already mapped,
// for the GPU's copy engines; false when the runtime refuses it (the error is
// cleared) or there is no GPU backend. unregister_host undoes it. `portable`:
// for every GPU context of the process, so that any thread may undo it.
bool register_host(void* data, std::size_t bytes, bool portable = false);
void unregister_host(void* data);

}  // namespace discount::gpu
