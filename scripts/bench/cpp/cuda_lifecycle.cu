// What the CUDA runtime costs a short process, apart from the work (issue 22:
// on the H200 node a 20 GB device job spent about 0.5 s in start-up and 0.1 s
// after its report, against about 0.07 and 0.01 s for the same job in an
// OpenMP build). It measures, on one GPU:
//   - child processes, each timed from spawn to reaped on one monotonic clock:
//     none (no CUDA call), context (cuInit, then the primary context),
//     context + the app's allocations (128 MiB device, 96 MiB pinned, 32
//     streams), each of the last two also with cudaDeviceReset before return,
//     each of the last two also leaving by _exit (no runtime teardown),
//     "pin_small_first" (4 KiB pinned, then 96 MiB: is the first pinning's
//     cost fixed?), and "warm": the context made on a second thread while main sleeps for
//     the time host work would take (is the context's time hidden?);
//   - in this process: 96 MiB pinned by cudaHostAlloc against ordinary pages
//     touched then registered, and cudaHostRegister / Unregister of 16 GiB of
//     touched pages on 1, 2, 4, 8 and 16 threads at once, in small and in
//     transparent huge pages (issue 23: whether pinning a user's array in
//     place scales with threads or page size).
//   nvcc -O2 -o /tmp/cuda_lifecycle scripts/bench/cpp/cuda_lifecycle.cu
//   /tmp/cuda_lifecycle [register GiB=16; 0: the child processes only] [rounds=3]
#include <cuda_runtime.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

double now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void touch(char* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
}

// The app's allocations in a device job of memory.staging: none.
void allocate_like_the_app(std::vector<void*>& keep, std::vector<cudaStream_t>& streams) {
  void* d = nullptr;
  check(cudaMalloc(&d, 128u << 20), "cudaMalloc");
  keep.push_back(d);
  void* h = nullptr;
  check(cudaHostAlloc(&h, 96u << 20, cudaHostAllocDefault), "cudaHostAlloc");
  keep.push_back(h);
  for (int i = 0; i < 32; ++i) {
    cudaStream_t s{};
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
    streams.push_back(s);
  }
}

// A child: prints "main T" and the times of its steps on the shared clock,
// then the time it returns from main.
int child(const std::string& mode) {
  std::printf("main %.6f\n", now());
  if (mode != "none") {
    if (mode == "warm") {
      std::thread t([] { cudaFree(nullptr); });
      usleep(300000);  // stands in for host work of 0.3 s
      std::printf("host_work %.6f\n", now());
      t.join();
      std::printf("context %.6f\n", now());
    } else {
      int n = 0;
      check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
      std::printf("init %.6f\n", now());
      check(cudaFree(nullptr), "cudaFree(0)");
      std::printf("context %.6f\n", now());
    }
    std::vector<void*> keep;
    std::vector<cudaStream_t> streams;
    if (mode == "pin_small_first") {
      // Is a process's first pinning a fixed cost that a small one absorbs?
      void* small = nullptr;
      check(cudaHostAlloc(&small, 4096, cudaHostAllocDefault), "cudaHostAlloc 4 KiB");
      std::printf("pin_4KiB %.6f\n", now());
      void* big = nullptr;
      check(cudaHostAlloc(&big, 96u << 20, cudaHostAllocDefault), "cudaHostAlloc 96 MiB");
      std::printf("pin_96MiB %.6f\n", now());
      keep.push_back(small);
    }
    if (mode.find("alloc") != std::string::npos) {
      allocate_like_the_app(keep, streams);
      std::printf("alloc %.6f\n", now());
    }
    if (mode.find("reset") != std::string::npos) {
      for (auto s : streams) cudaStreamDestroy(s);
      if (!keep.empty()) {
        cudaFree(keep[0]);
        cudaFreeHost(keep[1]);
      }
      check(cudaDeviceReset(), "cudaDeviceReset");
      std::printf("reset %.6f\n", now());
    }
  }
  std::printf("return %.6f\n", now());
  std::fflush(stdout);
  // "_exit": leave without the runtime's teardown (atexit handlers and static
  // destructors); the kernel driver releases the context as the process's
  // files close, which the parent's wait still includes.
  if (mode.find("_exit") != std::string::npos) _exit(0);
  return 0;
}

// Runs `self --child mode`, reads its lines; prints each step's duration and
// the time from its return to being reaped (the process's exit).
void run_child(const char* self, const std::string& mode) {
  int out[2];
  if (pipe(out) != 0) std::exit(1);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  std::string m = mode;
  char* argv[] = {const_cast<char*>(self), const_cast<char*>("--child"), m.data(), nullptr};
  const double spawned = now();
  pid_t pid = 0;
  if (posix_spawn(&pid, self, &fa, nullptr, argv, environ) != 0) std::exit(1);
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t r; (r = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, std::size_t(r));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const double reaped = now();
  std::printf("%-18s total %.3f s:", mode.c_str(), reaped - spawned);
  double last = spawned;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl - at);
    at = nl == std::string::npos ? text.size() : nl + 1;
    char name[64];
    double t = 0;
    if (std::sscanf(line.c_str(), "%63s %lf", name, &t) == 2) {
      std::printf(" %s %.3f", std::strcmp(name, "main") == 0 ? "exec" : name, t - last);
      last = t;
    }
  }
  std::printf(" exit %.3f\n", reaped - last);
  std::fflush(stdout);
}

void pinned_alloc() {
  const std::size_t bytes = 96u << 20;
  double t0 = now();
  void* h = nullptr;
  check(cudaHostAlloc(&h, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  const double alloc = now() - t0;
  t0 = now();
  cudaFreeHost(h);
  const double freed = now() - t0;
  t0 = now();
  char* p = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  touch(p, bytes);
  const double touched = now() - t0;
  check(cudaHostRegister(p, bytes, cudaHostRegisterDefault), "cudaHostRegister");
  const double registered = now() - t0 - touched;
  t0 = now();
  cudaHostUnregister(p);
  munmap(p, bytes);
  std::printf("96 MiB pinned: cudaHostAlloc %.4f s (free %.4f); mmap+touch %.4f s + register %.4f s\n", alloc, freed,
              touched, registered);
}

// `huge`: the pages asked for as transparent huge pages (MADV_HUGEPAGE), as
// NumPy asks for its large arrays.
void register_scaling(std::size_t gib, int rounds, bool huge) {
  const std::size_t bytes = gib << 30;
  char* p = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) return;
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  {
    std::vector<std::thread> ts;
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned t = 0; t < n; ++t) ts.emplace_back([=] { touch(p + bytes / n * t, bytes / n); });
    for (auto& t : ts) t.join();
  }
  for (int threads : {1, 2, 4, 8, 16}) {
    double best_reg = 1e9, best_unreg = 1e9;
    for (int r = 0; r < rounds; ++r) {
      const std::size_t share = bytes / std::size_t(threads);
      std::vector<std::thread> ts;
      double t0 = now();
      for (int t = 0; t < threads; ++t)
        ts.emplace_back([=] { check(cudaHostRegister(p + share * t, share, 0), "register"); });
      for (auto& t : ts) t.join();
      best_reg = std::min(best_reg, now() - t0);
      ts.clear();
      t0 = now();
      for (int t = 0; t < threads; ++t) ts.emplace_back([=] { cudaHostUnregister(p + share * t); });
      for (auto& t : ts) t.join();
      best_unreg = std::min(best_unreg, now() - t0);
    }
    std::printf("register %zu GiB (%s pages) on %2d threads: %.3f s (%.1f GB/s), unregister %.3f s (%.1f GB/s)\n", gib,
                huge ? "huge" : "small", threads, best_reg, double(bytes) / best_reg / 1e9, best_unreg,
                double(bytes) / best_unreg / 1e9);
    std::fflush(stdout);
  }
  munmap(p, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--child") return child(argv[2]);
  const std::size_t gib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 16;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  for (int r = 0; r < rounds; ++r)
    for (const char* mode : {"none", "context", "context_reset", "context_exit", "alloc", "alloc_reset", "alloc_exit",
                             "warm", "pin_small_first"})
      run_child("/proc/self/exe", mode);
  if (gib == 0) return 0;  // the child processes only
  check(cudaFree(nullptr), "context");
  for (int r = 0; r < rounds; ++r) pinned_alloc();
  std::FILE* thp = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  char mode[128] = "unknown";
  if (thp) {
    if (!std::fgets(mode, sizeof mode, thp)) std::strcpy(mode, "unknown\n");
    std::fclose(thp);
  }
  std::printf("transparent huge pages: %s", mode);
  register_scaling(gib, rounds, false);
  register_scaling(gib, rounds, true);
  return 0;
}
