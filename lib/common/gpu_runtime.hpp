// Every call into the GPU vendor's runtime, in one place: a HIP or SYCL build
// would change only gpu_runtime.cpp (and add its execution space instances in
// pipeline/exec_instances.hpp). Without a GPU backend each function answers
// "no GPU" (0, empty) and does nothing.
#pragma once

#include <cstdint>
#include <string>

namespace discount::gpu {

// Free memory of `device` in bytes (it becomes the current device); 0 without one.
std::uint64_t free_bytes(int device);
// GPUs this process can see (CUDA_VISIBLE_DEVICES applied); 0 without a GPU backend.
int device_count();
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

}  // namespace discount::gpu
