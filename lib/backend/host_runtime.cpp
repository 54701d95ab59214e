// The GPU runtime's stand-in where Kokkos has no GPU backend
// (backend/gpu_runtime.hpp): every call answers "no GPU" and does nothing.
#include "backend/gpu_runtime.hpp"

namespace discount::gpu {

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

}  // namespace discount::gpu
