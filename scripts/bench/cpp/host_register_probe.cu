// What page-locking ordinary host memory in place costs, against copying it
// into pinned buffers: the question behind moving NumPy arrays to a GPU
// without a host copy (docs/performance-history.md, "NumPy arrays pinned in place").
//
// It maps two arrays as NumPy does (malloc, MADV_HUGEPAGE, touched on every
// thread), then times:
//   - cudaHostRegister / cudaHostUnregister of the whole array, and of it in
//     pieces on 1, 4 and 16 threads;
//   - H2D from one registered array and D2H into the other at once, in
//     pieces on several streams, against the same over cudaMallocHost buffers;
//   - registering pieces just ahead of their copies (the per-call cost a
//     Python multiply would pay), whole array each way at once;
//   - a kernel that reads and writes pageable memory directly, when the
//     device reports pageable memory access (HMM).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 scripts/bench/cpp/host_register_probe.cu -o probe
// Run:   ./probe [GiB per array, default 8] [threads, default 16]
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class F>
void on_threads(int threads, F&& body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&body, t] { body(t); });
  for (auto& thread : pool) thread.join();
}

// As NumPy allocates a large array: malloc (an mmap in glibc), then
// MADV_HUGEPAGE over its whole pages, then the first touch on every thread.
char* numpy_like(std::size_t bytes, int threads) {
  char* data = static_cast<char*>(std::malloc(bytes));
  if (!data) std::exit(1);
  const std::size_t page = 4096;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  on_threads(threads, [&](int t) {
    const std::size_t share = (bytes + threads - 1) / threads;
    const std::size_t from = std::min(bytes, share * t), to = std::min(bytes, from + share);
    for (std::size_t i = from; i < to; i += page) data[i] = static_cast<char>(i * 7 + 1);
  });
  return data;
}

struct Timing {
  double reg = 0, unreg = 0;
};

// Registers [data, data + bytes) in `piece`-sized pieces on `threads`
// threads, then unregisters them the same way.
Timing register_pieces(char* data, std::size_t bytes, std::size_t piece, int threads) {
  const std::size_t pieces = (bytes + piece - 1) / piece;
  std::atomic<std::size_t> next{0};
  Timing timing;
  double start = now();
  on_threads(threads, [&](int) {
    for (std::size_t p; (p = next++) < pieces;)
      check(cudaHostRegister(data + p * piece, std::min(piece, bytes - p * piece), cudaHostRegisterDefault),
            "cudaHostRegister");
  });
  timing.reg = now() - start;
  next = 0;
  start = now();
  on_threads(threads, [&](int) {
    for (std::size_t p; (p = next++) < pieces;) check(cudaHostUnregister(data + p * piece), "cudaHostUnregister");
  });
  timing.unreg = now() - start;
  return timing;
}

// H2D of src and D2H into dst at once, piece by piece on `streams` streams,
// through a device buffer of one piece per stream; returns seconds.
double copy_both_ways(const char* src, char* dst, std::size_t bytes, std::size_t piece, int streams) {
  std::vector<cudaStream_t> in(streams), out(streams);
  std::vector<char*> device(streams);
  std::vector<char*> device_out(streams);
  for (int s = 0; s < streams; ++s) {
    check(cudaStreamCreateWithFlags(&in[s], cudaStreamNonBlocking), "stream");
    check(cudaStreamCreateWithFlags(&out[s], cudaStreamNonBlocking), "stream");
    check(cudaMalloc(&device[s], piece), "cudaMalloc");
    check(cudaMalloc(&device_out[s], piece), "cudaMalloc");
  }
  check(cudaDeviceSynchronize(), "sync");
  const double start = now();
  const std::size_t pieces = (bytes + piece - 1) / piece;
  for (std::size_t p = 0; p < pieces; ++p) {
    const int s = static_cast<int>(p % streams);
    const std::size_t n = std::min(piece, bytes - p * piece);
    check(cudaMemcpyAsync(device[s], src + p * piece, n, cudaMemcpyHostToDevice, in[s]), "H2D");
    check(cudaMemcpyAsync(dst + p * piece, device_out[s], n, cudaMemcpyDeviceToHost, out[s]), "D2H");
  }
  check(cudaDeviceSynchronize(), "sync");
  const double seconds = now() - start;
  for (int s = 0; s < streams; ++s) {
    cudaStreamDestroy(in[s]);
    cudaStreamDestroy(out[s]);
    cudaFree(device[s]);
    cudaFree(device_out[s]);
  }
  return seconds;
}

// Per call, as a Python multiply would do it: `threads` threads each take the
// next piece, register it in src and dst, copy it up, back down into dst on a
// stream of their own, wait, and unregister. Returns seconds for the whole.
double register_and_copy(char* src, char* dst, std::size_t bytes, std::size_t piece, int threads) {
  const std::size_t pieces = (bytes + piece - 1) / piece;
  std::atomic<std::size_t> next{0};
  const double start = now();
  on_threads(threads, [&](int) {
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    char* device = nullptr;
    check(cudaMalloc(&device, piece), "cudaMalloc");
    for (std::size_t p; (p = next++) < pieces;) {
      const std::size_t n = std::min(piece, bytes - p * piece);
      check(cudaHostRegister(src + p * piece, n, cudaHostRegisterDefault), "register src");
      check(cudaHostRegister(dst + p * piece, n, cudaHostRegisterDefault), "register dst");
      check(cudaMemcpyAsync(device, src + p * piece, n, cudaMemcpyHostToDevice, stream), "H2D");
      check(cudaMemcpyAsync(dst + p * piece, device, n, cudaMemcpyDeviceToHost, stream), "D2H");
      check(cudaStreamSynchronize(stream), "sync");
      check(cudaHostUnregister(src + p * piece), "unregister src");
      check(cudaHostUnregister(dst + p * piece), "unregister dst");
    }
    cudaFree(device);
    cudaStreamDestroy(stream);
  });
  return now() - start;
}

__global__ void scale_in_place(const double* in, double* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] * 1.0000001;
}

}  // namespace

int main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 8.0;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 16;
  const std::size_t bytes = static_cast<std::size_t>(gib * (1ull << 30)) / 4096 * 4096;
  const double gb = bytes / 1e9;
  check(cudaFree(nullptr), "context");
  int device = 0;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "properties");
  int pageable = 0, host_tables = 0, register_ok = 0, host_pointer = 0;
  cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device);
  cudaDeviceGetAttribute(&host_tables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, device);
  cudaDeviceGetAttribute(&register_ok, cudaDevAttrHostRegisterSupported, device);
  cudaDeviceGetAttribute(&host_pointer, cudaDevAttrCanUseHostPointerForRegisteredMem, device);
  std::printf(
      "device %s: pageableMemoryAccess %d, usesHostPageTables %d, hostRegisterSupported %d, "
      "canUseHostPointerForRegisteredMem %d\n",
      prop.name, pageable, host_tables, register_ok, host_pointer);
  std::printf("arrays: 2 x %.2f GB, %d threads\n", gb, threads);

  double start = now();
  char* src = numpy_like(bytes, threads);
  char* dst = numpy_like(bytes, threads);
  std::printf("map and first touch of both: %.3f s\n", now() - start);

  start = now();
  check(cudaHostRegister(src, bytes, cudaHostRegisterDefault), "register whole");
  const double whole_reg = now() - start;
  start = now();
  check(cudaHostUnregister(src), "unregister whole");
  std::printf("whole array, one call: register %.3f s (%.1f GB/s), unregister %.3f s\n", whole_reg, gb / whole_reg,
              now() - start);
  for (std::size_t piece : {std::size_t(1) << 20, std::size_t(8) << 20, std::size_t(64) << 20})
    for (int t : {1, 4, threads}) {
      const Timing timing = register_pieces(src, bytes, piece, t);
      std::printf("pieces of %4zu MiB on %2d threads: register %.3f s (%.1f GB/s), unregister %.3f s (%.1f GB/s)\n",
                  piece >> 20, t, timing.reg, gb / timing.reg, timing.unreg, gb / timing.unreg);
    }

  // Copies from registered arrays, against pinned buffers of the same size.
  check(cudaHostRegister(src, bytes, cudaHostRegisterDefault), "register src");
  check(cudaHostRegister(dst, bytes, cudaHostRegisterDefault), "register dst");
  for (std::size_t piece : {std::size_t(1) << 20, std::size_t(8) << 20, std::size_t(64) << 20}) {
    const double seconds = copy_both_ways(src, dst, bytes, piece, 4);
    std::printf("registered arrays, both ways at once, %2zu MiB pieces on 4 streams: %.3f s (%.1f GB/s each way)\n",
                piece >> 20, seconds, gb / seconds);
  }
  cudaHostUnregister(src);
  cudaHostUnregister(dst);
  {
    const std::size_t ring = std::min(bytes, std::size_t(2) << 30);
    char *pin_in = nullptr, *pin_out = nullptr;
    check(cudaMallocHost(&pin_in, ring), "cudaMallocHost");
    check(cudaMallocHost(&pin_out, ring), "cudaMallocHost");
    std::memset(pin_in, 1, ring);
    const double seconds = copy_both_ways(pin_in, pin_out, ring, std::size_t(8) << 20, 4);
    std::printf("cudaMallocHost buffers, both ways at once, 8 MiB pieces: %.3f s for %.2f GB (%.1f GB/s each way)\n",
                seconds, ring / 1e9, ring / 1e9 / seconds);
    cudaFreeHost(pin_in);
    cudaFreeHost(pin_out);
  }
  for (std::size_t piece : {std::size_t(8) << 20, std::size_t(64) << 20})
    for (int t : {4, threads}) {
      const double seconds = register_and_copy(src, dst, bytes, piece, t);
      std::printf(
          "register + copy both ways + unregister per piece, %2zu MiB on %2d threads: %.3f s (%.1f GB/s each way)\n",
          piece >> 20, t, seconds, gb / seconds);
    }

  if (pageable) {
    const std::size_t n = std::min(bytes, std::size_t(1) << 30) / sizeof(double);
    for (int pass = 0; pass < 3; ++pass) {
      start = now();
      scale_in_place<<<prop.multiProcessorCount * 8, 512>>>(reinterpret_cast<const double*>(src),
                                                            reinterpret_cast<double*>(dst), n);
      check(cudaDeviceSynchronize(), "pageable kernel");
      const double seconds = now() - start;
      std::printf("kernel on pageable memory, %.2f GB read + written, pass %d: %.3f s (%.1f GB/s each way)\n",
                  n * 8 / 1e9, pass, seconds, n * 8 / 1e9 / seconds);
    }
  }
  std::free(src);
  std::free(dst);
  return 0;
}
