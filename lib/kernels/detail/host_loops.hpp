// The host loop family: one equal contiguous share of the slab per thread,
// whatever the slicing (the comment below says why). Kernel label:
// discount::apply_host.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

#include <unistd.h>  // sysconf: the last-level cache size

#include "backend/gpu_runtime.hpp"  // DISCOUNT_DEVICE_PASS, DISCOUNT_GPU_COMPILER
#include "kernels/detail/tuning.hpp"
#include "kernels/slicing.hpp"

// SSE2 intrinsics on x86 hosts, never in a GPU compiler's device pass.
#if defined(__SSE2__) && !DISCOUNT_DEVICE_PASS
#define DISCOUNT_HOST_SSE2 1
#include <emmintrin.h>  // non-temporal stores on host backends
#else
#define DISCOUNT_HOST_SSE2 0
#endif
// AVX-512 where the CPU has it, chosen when the program runs; only from a
// plain host compiler (GCC or Clang on x86-64), which takes per-function
// target attributes.
#if DISCOUNT_HOST_SSE2 && !DISCOUNT_GPU_COMPILER && defined(__x86_64__) && defined(__GNUC__)
#define DISCOUNT_HOST_AVX512 1
#include <immintrin.h>
#else
#define DISCOUNT_HOST_AVX512 0
#endif

namespace discount::detail {

// Host backends (OpenMP, Serial). A host has a few cores, each with its own
// stream into memory: what makes a loop fast there is that every thread
// streams one long contiguous part of the slab and that all finish together,
// whatever the slicing. So on host spaces the slab, in memory order, is cut
// into one contiguous share of equal size per thread, its boundaries on
// 64-byte lines of cv, for every parallel_dims choice. (Cutting the parallel
// positions' points instead gave `[num]` 5 shares that interleave in every
// cache line, and `[date]` whole dates, 7 against 6 per thread on 16 cores.)
// Inside a share, the innermost loop is a vectorised contiguous run along the
// fastest memory position; when the share spans several entries of the
// slowest position (dates, usually) it is walked in column tiles of `column`
// elements, all dates of one column before the next, so that column's multBy
// stays in L1/L2 while discount and cv stream through. With a user tile
// (compute.tile), the parallel positions' points are shared out in whole tiles
// instead (a share: a row-major range of tiles, walked the same way).
// Out of place, stores may bypass the cache (non-temporal): that saves the
// read-for-ownership of every output line, as glibc's memcpy does for large
// copies.
// 512 KiB of multBy per column tile (within a core's L2 on current x86 servers). On 2 cores (docs/performance.md)
// 16384, 65536 and 262144 lay within the noise of each other, and a whole date (no tiling: multBy re-read for
// every date) was slowest.
constexpr std::int64_t kHostColumn = 65536;
// Shorter runs are stored through the cache: a non-temporal store of part of a
// cache line costs a read-modify-write in memory.
constexpr std::int64_t kStreamMinRun = 1024;

// Largest output (bytes) still written through the cache out of place: a
// quarter of the last-level cache the host reports, about where recent
// glibc's memcpy turns to non-temporal stores. The whole LLC was the rule
// before: a VM may report its host's whole L3 (508 MiB on the 2-core
// development VM), so a 320 MB output went through the cache at 0.72-0.90 of
// a Numba copy's speed, against 1.00-1.10 streamed (paired, 2026-12-03;
// docs/performance.md). Outputs of 40 MB still ran faster through the cache.
inline std::int64_t host_streaming_threshold() {
  static const std::int64_t bytes = [] {
    long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return (llc > 0 ? std::int64_t(llc) : std::int64_t{32} << 20) / 4;
  }();
  return bytes;
}

#if DISCOUNT_HOST_AVX512
inline bool host_has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

// Dates at once in host_run_dates: one load of multBy serves that many
// products; four reached memcpy's time on the development VM, where one
// date at a time did not (docs/performance-history.md).
constexpr int kHostDates = 4;

// The whole 64-byte lines of G runs `plane` elements apart, from k (d + k
// and each d + g * plane + k on a line), one 8-wide load, multiply and store
// each, the multBy group loaded once for the G products; returns where it
// stopped. Each group is loaded before it is stored, so d == s is safe.
// host_run takes G = 1, host_run_dates G = kHostDates.
template <int G>
__attribute__((target("avx512f"))) inline std::int64_t host_lines_avx512(const double* m, std::int64_t mstride,
                                                                         const double* s, double* d, std::int64_t k,
                                                                         std::int64_t len, std::int64_t plane,
                                                                         bool stream) {
  const __m512d v = _mm512_set1_pd(*m);
  for (; k + 8 <= len; k += 8) {
    const __m512d f = mstride == 1 ? _mm512_loadu_pd(m + k) : v;
    for (int g = 0; g < G; ++g) {
      const __m512d p = _mm512_mul_pd(f, _mm512_loadu_pd(s + g * plane + k));
      if (stream)
        _mm512_stream_pd(d + g * plane + k, p);
      else
        _mm512_store_pd(d + g * plane + k, p);
    }
  }
  return k;
}

// d[g * plane + k] = m[k * mstride] * s[g * plane + k] for g < kHostDates and
// k < len: kHostDates runs, `plane` elements apart, sharing one multBy run.
// d + g * plane lies alike on 64-byte lines for every g (plane % 8 == 0).
inline void host_run_dates(const double* m, std::int64_t mstride, const double* s, double* d, std::int64_t len,
                           std::int64_t plane, bool stream) {
  std::int64_t k = 0;
  if (mstride <= 1) {
    for (; k < len && reinterpret_cast<std::uintptr_t>(d + k) % 64 != 0; ++k)
      for (int g = 0; g < kHostDates; ++g) d[g * plane + k] = m[k * mstride] * s[g * plane + k];
    k = host_lines_avx512<kHostDates>(m, mstride, s, d, k, len, plane, stream);
  }
  for (; k < len; ++k)
    for (int g = 0; g < kHostDates; ++g) d[g * plane + k] = m[k * mstride] * s[g * plane + k];
}
#endif

// d[k] = m[k * mstride] * s[k], k < len; d may equal s. On x86 the contiguous
// cases are written with SSE2 intrinsics: each group is loaded before it is
// stored, so d == s is safe, and the compiler needs no alias check (its
// runtime check would send an in-place call to the scalar loop). Stores start
// on a 64-byte line of d and fill whole lines, four in a row: ahead of one
// 16-byte store per iteration in 2-core runs, non-temporal or not
// (docs/performance.md). d is 8-byte aligned (a double), so the peel reaches
// the line; a d that is not falls through to the scalar loop.
inline void host_run(const double* m, std::int64_t mstride, const double* s, double* d, std::int64_t len, bool stream) {
  std::int64_t k = 0;
#if DISCOUNT_HOST_SSE2
  if (mstride <= 1 && len > 0) {
    for (; k < len && reinterpret_cast<std::uintptr_t>(d + k) % 64 != 0; ++k) d[k] = m[k * mstride] * s[k];
#if DISCOUNT_HOST_AVX512
    if (host_has_avx512()) k = host_lines_avx512<1>(m, mstride, s, d, k, len, 0, stream);
#endif
    const __m128d v = _mm_set1_pd(*m);
    auto factor = [&](std::int64_t j) { return mstride == 1 ? _mm_loadu_pd(m + j) : v; };
    for (; k + 8 <= len; k += 8) {  // one 64-byte line of d per iteration
      const __m128d a0 = _mm_loadu_pd(s + k), a1 = _mm_loadu_pd(s + k + 2), a2 = _mm_loadu_pd(s + k + 4),
                    a3 = _mm_loadu_pd(s + k + 6);
      const __m128d p0 = _mm_mul_pd(factor(k), a0), p1 = _mm_mul_pd(factor(k + 2), a1),
                    p2 = _mm_mul_pd(factor(k + 4), a2), p3 = _mm_mul_pd(factor(k + 6), a3);
      if (stream) {
        _mm_stream_pd(d + k, p0);
        _mm_stream_pd(d + k + 2, p1);
        _mm_stream_pd(d + k + 4, p2);
        _mm_stream_pd(d + k + 6, p3);
      } else {
        _mm_store_pd(d + k, p0);
        _mm_store_pd(d + k + 2, p1);
        _mm_store_pd(d + k + 4, p2);
        _mm_store_pd(d + k + 6, p3);
      }
    }
  }
#else
  (void)stream;
#endif
#if defined(__GNUC__) && !defined(__clang__) && !DISCOUNT_GPU_COMPILER
#pragma GCC ivdep
#endif
  for (; k < len; ++k) d[k] = m[k * mstride] * s[k];
}

struct HostLoops {
  const double* mult;
  const double* in;
  double* out;  // may alias `in`
  std::int64_t extent[3];
  std::int64_t ms[3];    // multBy stride of each memory position
  std::int64_t tile[3];  // user tiles: share unit along each position (serial positions: the whole extent)
  std::int64_t grid[3];  // user tiles: units along each position
  std::int64_t column;   // elements per column tile
  int parts;             // contiguous shares, one per thread
  bool stream;           // non-temporal stores
  bool by_tiles;         // a user tile was given: shares are ranges of tiles, not of elements
  std::int64_t lead;     // elements of cv before the first 64-byte line boundary (share boundaries sit on lines)

  std::int64_t plane() const { return extent[1] * extent[2]; }

  // Plane elements [from, to) of entry x of position 0, as runs: one when
  // multBy runs on with one stride across z rows, else one per z row.
  // run(multBy at the run's start, the run's first element in the slab, length).
  template <class Run>
  void plane_runs(std::int64_t x, std::int64_t from, std::int64_t to, Run&& run) const {
    const bool joined = ms[1] == ms[2] * extent[2];
    while (from < to) {
      const std::int64_t y = from / extent[2], z = from - y * extent[2];
      const std::int64_t end = joined ? to : std::min(to, (y + 1) * extent[2]);
      run(mult + x * ms[0] + y * ms[1] + z * ms[2], x * plane() + from, end - from);
      from = end;
    }
  }

  void plane_run(std::int64_t x, std::int64_t from, std::int64_t to) const {
    plane_runs(x, from, to, [&](const double* m, std::int64_t base, std::int64_t len) {
      host_run(m, ms[2], in + base, out + base, len, stream && len >= kStreamMinRun);
    });
  }

#if DISCOUNT_HOST_AVX512
  // Entries x .. x + kHostDates - 1 of position 0 at once (host_run_dates),
  // where multBy does not vary along position 0.
  void plane_run_dates(std::int64_t x, std::int64_t from, std::int64_t to) const {
    plane_runs(x, from, to, [&](const double* m, std::int64_t base, std::int64_t len) {
      host_run_dates(m, ms[2], in + base, out + base, len, plane(), stream && len >= kStreamMinRun);
    });
  }

  // Whether plane_run_dates may take entries of position 0 together: multBy
  // the same for each, their planes alike on cache lines, and the CPU has AVX-512.
  bool dates_together() const { return ms[0] == 0 && ms[2] <= 1 && plane() % 8 == 0 && host_has_avx512(); }
#endif

  // Entries [x0, x1) of position 0, plane elements [lo, hi) of each, except
  // that the first starts at `first_lo` and the last ends at `last_hi`: in
  // column tiles, every x of one column before the next (the entries between
  // the first and the last several at a time where dates_together()).
  void walk(std::int64_t x0, std::int64_t x1, std::int64_t lo, std::int64_t hi, std::int64_t first_lo,
            std::int64_t last_hi) const {
    if (x1 - x0 == 1) {  // one entry: no multBy to reuse, one pass
      plane_run(x0, first_lo, last_hi);
      return;
    }
#if DISCOUNT_HOST_AVX512
    const std::int64_t group = dates_together() ? kHostDates : 1;
#endif
    const std::int64_t c0 = std::min(lo, first_lo), c1 = std::max(hi, last_hi);
    for (std::int64_t c = c0; c < c1; c += column)
      for (std::int64_t x = x0; x < x1;) {
#if DISCOUNT_HOST_AVX512
        if (group > 1 && x > x0 && x + group < x1) {  // inner entries only: all span [lo, hi)
          const std::int64_t a = std::max(c, lo), b = std::min(c + column, hi);
          if (a < b) plane_run_dates(x, a, b);
          x += group;
          continue;
        }
#endif
        const std::int64_t a = std::max(c, x == x0 ? first_lo : lo);
        const std::int64_t b = std::min(c + column, x + 1 == x1 ? last_hi : hi);
        if (a < b) plane_run(x, a, b);
        ++x;
      }
  }

  // Elements [a, b) of the slab in memory order.
  void walk_flat(std::int64_t a, std::int64_t b) const {
    if (a >= b) return;
    const std::int64_t p = plane(), x0 = a / p, x1 = (b - 1) / p + 1;
    walk(x0, x1, 0, p, a - x0 * p, b - (x1 - 1) * p);
  }

  // User tiles: units [a, b) in row-major order, cut into at most five boxes.
  void walk_tiles(std::int64_t a, std::int64_t b) const {
    const std::int64_t units_plane = grid[1] * grid[2];
    while (a < b) {
      const std::int64_t u2 = a % grid[2], u1 = a / grid[2] % grid[1], u0 = a / units_plane;
      std::int64_t ulo[3] = {u0, u1, u2}, uhi[3] = {u0 + 1, u1 + 1, u2 + 1};
      if (u2 != 0 || b - a < grid[2]) {
        uhi[2] = u2 + std::min(grid[2] - u2, b - a);
      } else if (u1 != 0 || b - a < units_plane) {
        uhi[1] = u1 + std::min(grid[1] - u1, (b - a) / grid[2]);
        uhi[2] = grid[2];
      } else {
        uhi[0] = u0 + (b - a) / units_plane;
        uhi[1] = grid[1];
        uhi[2] = grid[2];
      }
      a += (uhi[0] - ulo[0]) * (uhi[1] - ulo[1]) * (uhi[2] - ulo[2]);
      std::int64_t lo[3], hi[3];
      for (int p = 0; p < 3; ++p) {
        lo[p] = ulo[p] * tile[p];
        hi[p] = std::min(extent[p], uhi[p] * tile[p]);
      }
      // The box: rows [lo1, hi1) x [lo2, hi2) of every x; whole z rows make one plane range.
      if (lo[2] == 0 && hi[2] == extent[2]) {
        walk(lo[0], hi[0], lo[1] * extent[2], hi[1] * extent[2], lo[1] * extent[2], hi[1] * extent[2]);
      } else if (hi[2] - lo[2] >= column) {  // long pieces of rows: each in column tiles
        for (std::int64_t y = lo[1]; y < hi[1]; ++y) {
          const std::int64_t r0 = y * extent[2] + lo[2], r1 = y * extent[2] + hi[2];
          walk(lo[0], hi[0], r0, r1, r0, r1);
        }
      } else {
        const std::int64_t group = column / (hi[2] - lo[2]);  // rows per column tile
        for (std::int64_t y0 = lo[1]; y0 < hi[1]; y0 += group)
          for (std::int64_t x = lo[0]; x < hi[0]; ++x)
            for (std::int64_t y = y0; y < std::min(hi[1], y0 + group); ++y)
              plane_run(x, y * extent[2] + lo[2], y * extent[2] + hi[2]);
      }
    }
  }

  // Share `part` of `parts`.
  void operator()(int part) const {
    if (by_tiles) {
      const std::int64_t units = grid[0] * grid[1] * grid[2];
      walk_tiles(units * part / parts, units * (part + 1) / parts);
    } else {
      // Equal shares of the lines after `lead`; the first share also takes the lead.
      const std::int64_t n = extent[0] * plane();
      const std::int64_t lines = n > lead ? (n - lead + 7) / 8 : 0;
      auto boundary = [&](std::int64_t q) { return q == 0 ? 0 : std::min(n, lead + lines * q / parts * 8); };
      walk_flat(boundary(part), boundary(part + 1));
    }
#if DISCOUNT_HOST_SSE2
    if (stream) _mm_sfence();  // order the non-temporal stores before the kernel's end
#endif
  }
};

// The host loops for `parts` shares (fewer when the slab is small: at least
// one 64-byte line each, or one tile with a user tile). A zero-sized slab
// gives parts = 0.
template <class MultView, class InView, class OutView>
HostLoops make_host_loops(const Slicing& slicing, const Tuning& tuning, const MultView& mult, const InView& in,
                          const OutView& out, const std::array<std::int64_t, 3>& ms, int parts) {
  HostLoops loops{mult.data(), in.data(), out.data(), {}, {}, {}, {}, 0, 0, false, false, 0};
  for (int p = 0; p < 3; ++p) {
    loops.extent[p] = std::int64_t(in.extent(p));
    loops.ms[p] = ms[p];
    const std::int64_t user = slicing.parallel[p] ? slicing.tile[p] : 0;
    loops.by_tiles = loops.by_tiles || user > 0;
    loops.tile[p] = std::max<std::int64_t>(1, slicing.parallel[p] ? user : loops.extent[p]);
    loops.grid[p] = (loops.extent[p] + loops.tile[p] - 1) / loops.tile[p];
  }
  const std::int64_t n = loops.extent[0] * loops.extent[1] * loops.extent[2];
  const std::uintptr_t misalign = reinterpret_cast<std::uintptr_t>(out.data()) % 64;
  loops.lead = misalign % sizeof(double) == 0 ? std::min<std::int64_t>(n, (64 - misalign) % 64 / 8) : 0;
  const std::int64_t units = loops.by_tiles ? loops.grid[0] * loops.grid[1] * loops.grid[2] : (n + 7) / 8;
  loops.column = tuning.host_column > 0 ? tuning.host_column : kHostColumn;
  loops.parts = int(std::min<std::int64_t>(std::max(parts, 1), units));
  const bool distinct = static_cast<const void*>(in.data()) != static_cast<const void*>(out.data());
  const std::int64_t bytes = std::int64_t(out.span() * sizeof(double));
  loops.stream =
      (distinct || tuning.host_streaming_stores > 1) &&
      (tuning.host_streaming_stores > 0 || (tuning.host_streaming_stores < 0 && bytes > host_streaming_threshold()));
  return loops;
}

template <class ExecSpace, class MultView, class InView, class OutView>
void launch_host(const ExecSpace& exec, const Slicing& slicing, const Tuning& tuning, const MultView& mult,
                 const InView& in, const OutView& out, const std::array<std::int64_t, 3>& ms) {
  const HostLoops loops = make_host_loops(slicing, tuning, mult, in, out, ms, exec.concurrency());
  if (loops.parts == 0) return;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  Kokkos::parallel_for("discount::apply_host", Policy(exec, 0, loops.parts), loops);
}

}  // namespace discount::detail
