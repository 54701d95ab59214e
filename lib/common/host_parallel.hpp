// Splits an index range over plain std::threads for the I/O-side loops
// (synthetic fill, finiteness scan, checksums). Kept off Kokkos on purpose:
// these run on the reader/writer threads while Kokkos owns the main thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/affinity.hpp"
#include "common/knobs.hpp"

namespace discount {

// Threads for the I/O-side loops: half the process's CPUs (its launcher's
// binding, else the job's cpuset), at most 8; DISCOUNT_IO_THREADS overrides
// (tests use it to exercise the threaded paths). Deep in header-only code, so
// it takes the process's reading of the knobs rather than the job's.
inline unsigned io_threads() {
  static const unsigned n = [] {
    if (knobs().io_threads > 0) return static_cast<unsigned>(knobs().io_threads);
    const int cpus = process_cpu_count();
    unsigned hw = cpus > 0 ? static_cast<unsigned>(cpus) : std::max(1u, std::thread::hardware_concurrency());
    return std::max(1u, std::min(8u, hw / 2));
  }();
  return n;
}

// The piece a thread checks right after moving it (posix_io's PieceHook,
// InputSource::read_discount_visited): within a core's L2 on the nodes we
// target, so the check reads it from cache.
constexpr std::uint64_t kCachePieceBytes = std::uint64_t{1} << 20;

// Threads for copies between memory and memory (arrays handed in by the
// Python module, and the staging buffers): every CPU the process may use,
// at least io_threads(). Such copies wait on nothing but memory: on the GPU
// node the Python module's staging copies ran at 11-15 GB/s on 8 threads,
// where a 16-thread copy of the same arrays reached 62 GB/s.
// DISCOUNT_MEMORY_THREADS overrides (benchmarks compare thread counts).
inline unsigned memory_threads() {
  static const unsigned n = [] {
    if (knobs().memory_threads > 0) return static_cast<unsigned>(knobs().memory_threads);
    const int cpus = process_cpu_count();
    return std::max(io_threads(), static_cast<unsigned>(std::clamp(cpus, 1, 64)));
  }();
  return n;
}

// worker(t) on `threads` threads (t = 0 on the calling thread).
template <class Worker>
void run_on_threads(unsigned threads, Worker&& worker) {
  std::vector<std::thread> others;
  for (unsigned t = 1; t < threads; ++t)
    others.emplace_back([&worker, t] {
      use_process_affinity();
      worker(t);
    });
  worker(0u);
  for (auto& other : others) other.join();
}

// What `threads` threads reach together (clock and memory shared): each runs
// warm(t) (its buffers touched), waits for the others, then work(t); the wall
// seconds from the common start to the last thread done. Neither may throw.
template <class Warm, class Work>
double seconds_together(unsigned threads, Warm&& warm, Work&& work) {
  using Clock = std::chrono::steady_clock;
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::atomic<Clock::rep> start{0}, last_end{0};
  run_on_threads(threads, [&](unsigned t) {
    warm(t);
    if (ready.fetch_add(1) + 1 == threads) {
      start = Clock::now().time_since_epoch().count();
      go.store(true);
    }
    while (!go.load()) std::this_thread::yield();
    work(t);
    const Clock::rep end = Clock::now().time_since_epoch().count();
    for (Clock::rep seen = last_end.load(); end > seen && !last_end.compare_exchange_weak(seen, end);) {}
  });
  return std::chrono::duration<double>(Clock::duration(last_end.load() - start.load())).count();
}

// body(begin, end, part) over [0, n) split into at most `parts` pieces.
template <class Body>
void host_parallel(std::int64_t n, unsigned parts, Body&& body) {
  if (n <= 0) return;
  const std::int64_t min_piece = 1 << 16;
  parts = static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(parts, n / min_piece)));
  if (parts <= 1) {
    body(std::int64_t{0}, n, 0u);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(parts - 1);
  const std::int64_t step = (n + parts - 1) / parts;
  for (unsigned p = 1; p < parts; ++p) {
    const std::int64_t b = std::min(n, p * step), e = std::min(n, b + step);
    workers.emplace_back([&body, b, e, p] {
      use_process_affinity();
      body(b, e, p);
    });
  }
  body(std::int64_t{0}, std::min(n, step), 0u);
  for (auto& w : workers) w.join();
}

}  // namespace discount
