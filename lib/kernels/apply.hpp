// The kernel: cv = multBy * discount over one slab. On a GPU, a Kokkos
// MDRangePolicy spans the configured parallel dims and the other dims are
// serial loops inside the functor (the seed's one-worker-per-date / per-id /
// per-element choices); on host backends the slab is cut into one contiguous
// share per thread whatever the slicing (HostLoops below). Views are in the
// slab buffer's memory order; multBy is indexed through per-position strides
// (0 along date), so any axes order works without a transpose.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <unistd.h>  // sysconf: the last-level cache size
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>  // non-temporal stores on host backends
#endif

#include "common/error.hpp"
#include "common/gpu_runtime.hpp"
#include "kernels/slicing.hpp"

namespace discount {

// GPUs map MDRange dimension 0 to threadIdx.x, so the fastest memory position
// must come first there or loads do not coalesce (docs/performance.md has the
// cost); host backends iterate the last dimension innermost.
template <class ExecSpace>
constexpr bool iterate_reversed() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
}

namespace detail {

constexpr int set_bit(int mask, int n) {  // position of the n-th set bit
  for (int p = 0, seen = 0; p < 3; ++p)
    if (mask & (1 << p)) {
      if (seen == n) return p;
      ++seen;
    }
  return -1;
}

// Index arithmetic runs in `Index` (32-bit when the slab allows: cheaper on
// GPUs). The Views own nothing here; the functor keeps their raw pointers.
template <int Mask, bool Reverse, class Index>
struct ApplyFunctor {
  const double* mult;  // flat [ids * nums] of the slab
  const double* in;    // [e0][e1][e2], row-major
  double* out;         // may alias `in` (in place)
  Index e1, e2;
  Index extent[3];
  Index ms[3];         // multBy stride of each memory position (0 along date)

  static constexpr bool par0 = Mask & 1, par1 = Mask & 2, par2 = Mask & 4;
  static constexpr int rank = int(par0) + int(par1) + int(par2);
  static constexpr int pos0 = set_bit(Mask, 0), pos1 = set_bit(Mask, 1), pos2 = set_bit(Mask, 2);

  // The innermost serial position, if any. Its loop issues kBatch loads before
  // the first store, so each thread keeps several loads in flight although
  // `out` may alias `in`; when multBy does not vary along it (date), multBy is
  // loaded once for the whole line.
  static constexpr int inner_serial = !par2 ? 2 : !par1 ? 1 : !par0 ? 0 : -1;
  static constexpr int kBatch = 4;

  KOKKOS_INLINE_FUNCTION Index offset(Index x, Index y, Index z) const { return (x * e1 + y) * e2 + z; }

  KOKKOS_INLINE_FUNCTION void serial_line(Index x, Index y, Index z) const {
    const Index base = offset(x, y, z);
    const Index mbase = x * ms[0] + y * ms[1] + z * ms[2];
    if constexpr (inner_serial < 0) {
      out[base] = mult[mbase] * in[base];
    } else {
      constexpr int s = inner_serial;
      const Index n = extent[s];
      const Index step = s == 0 ? e1 * e2 : s == 1 ? e2 : Index(1);
      const Index mstep = ms[s];
      const double hoisted = mstep == 0 ? mult[mbase] : 0.0;
      for (Index j = 0; j < n; j += kBatch) {
        double product[kBatch] = {};
        for (int u = 0; u < kBatch; ++u)
          if (j + u < n) {
            const double m = mstep == 0 ? hoisted : mult[mbase + (j + u) * mstep];
            product[u] = m * in[base + (j + u) * step];
          }
        for (int u = 0; u < kBatch; ++u)
          if (j + u < n) out[base + (j + u) * step] = product[u];
      }
    }
  }

  // Parallel positions are fixed by the caller; serial ones are looped here.
  KOKKOS_INLINE_FUNCTION void run(Index a, Index b, Index c) const {
    const Index a_end = (par0 || inner_serial == 0) ? a + 1 : extent[0];
    const Index b_end = (par1 || inner_serial == 1) ? b + 1 : extent[1];
    for (Index x = a; x < a_end; ++x)
      for (Index y = b; y < b_end; ++y) serial_line(x, y, c);
  }

  KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
    Index v[3] = {0, 0, 0};
    v[pos0] = i;
    run(v[0], v[1], v[2]);
  }
  KOKKOS_INLINE_FUNCTION void operator()(Index i, Index j) const {
    Index v[3] = {0, 0, 0};
    v[Reverse ? pos1 : pos0] = i;
    v[Reverse ? pos0 : pos1] = j;
    run(v[0], v[1], v[2]);
  }
  KOKKOS_INLINE_FUNCTION void operator()(Index i, Index j, Index k) const {
    if (Reverse) run(k, j, i);
    else run(i, j, k);
  }
};

template <class ExecSpace, int Mask, class Index, class MultView, class InView, class OutView>
void launch(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in,
            const OutView& out, const std::array<std::int64_t, 3>& ms) {
  constexpr bool reverse = iterate_reversed<ExecSpace>();
  using Functor = ApplyFunctor<Mask, reverse, Index>;
  const Functor functor{mult.data(), in.data(), out.data(), Index(in.extent(1)), Index(in.extent(2)),
                        {Index(in.extent(0)), Index(in.extent(1)), Index(in.extent(2))},
                        {Index(ms[0]), Index(ms[1]), Index(ms[2])}};
  constexpr int rank = Functor::rank;

  // Parallel memory positions in policy order.
  int order[3] = {Functor::pos0, Functor::pos1, Functor::pos2};
  if (reverse)
    for (int p = 0; p < rank / 2; ++p) std::swap(order[p], order[rank - 1 - p]);
  std::int64_t extent[3] = {1, 1, 1}, tile[3] = {1, 1, 1};
  for (int p = 0; p < rank; ++p) extent[p] = std::int64_t(in.extent(order[p]));

  // Auto tiles: on a GPU, up to 256 threads with the contiguous position on x;
  // on the host, about 2048 iterations per tile along the innermost positions.
  // A CUDA block allows at most kMaxBlockZ threads along z (rank 3's last
  // dimension); resolve() has refused a user tile above it.
  const std::int64_t target = reverse ? 256 : 2048;
  std::int64_t product = 1;
  for (int q = 0; q < rank; ++q) {
    const int p = reverse ? q : rank - 1 - q;  // fastest position first
    const std::int64_t user = slicing.tile[order[p]];
    std::int64_t cap = target / product;
    if (reverse && p == 2) cap = std::min<std::int64_t>(cap, kMaxBlockZ);
    tile[p] = user > 0 ? user : std::max<std::int64_t>(1, std::min(extent[p], cap));
    product *= tile[p];
  }

  if constexpr (rank == 1) {
    Kokkos::parallel_for("discount::apply",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, Index(extent[0])), functor);
  } else {
    using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<rank, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                         Kokkos::IndexType<Index>>;
    typename Policy::point_type lower{}, upper{}, tiles{};
    for (int p = 0; p < rank; ++p) {
      lower[p] = 0;
      upper[p] = extent[p];
      tiles[p] = tile[p];
    }
    Kokkos::parallel_for("discount::apply", Policy(exec, lower, upper, tiles), functor);
  }
}

// [id, num] parallel, date serial, in the file order [date][id][num]: id and
// num are one contiguous row per date, and multBy is that row. On a GPU each
// thread takes two neighbouring elements of the row (16-byte loads and
// stores), keeps its multBy pair in registers, and walks a chunk of `chunk`
// dates, four loads ahead. The work is ordered group by group: a group's
// `group` neighbouring pairs take all their chunks (chunk 0 of every pair,
// then chunk 1, ...) before the next group starts. So the GPU works on a few
// dates of a narrow band of rows at a time, close to a copy's linear stream
// (short chunks beat one thread walking all dates: docs/performance.md),
// while the group's multBy stays in L2 between its chunks.
struct alignas(16) Pair {
  double first, second;
};

template <class Index>
struct RowPairsFunctor {
  static constexpr int kBatch = 4;
  const double* mult;
  const double* in;
  double* out;   // may alias `in`
  Index step;    // pairs per date
  Index dates;
  Index chunk;   // dates per thread
  Index chunks;  // ceil(dates / chunk)
  Index group;   // pairs per group, at most `step`

  Index work() const { return (step + group - 1) / group * group * chunks; }

  KOKKOS_INLINE_FUNCTION void operator()(Index t) const {
    const Index span = group * chunks;
    const Index g = t / span;
    const Index r = t - g * span;
    const Index c = r / group;
    const Index p = g * group + (r - c * group);
    if (p >= step) return;
    const Pair m = reinterpret_cast<const Pair*>(mult)[p];
    const Pair* src = reinterpret_cast<const Pair*>(in) + p;
    Pair* dst = reinterpret_cast<Pair*>(out) + p;
    const Index d0 = c * chunk;
    const Index d1 = d0 + chunk < dates ? d0 + chunk : dates;
    for (Index d = d0; d < d1; d += kBatch) {
      Pair v[kBatch] = {};
      for (int u = 0; u < kBatch; ++u)
        if (d + u < d1) v[u] = src[(d + u) * step];
      for (int u = 0; u < kBatch; ++u)
        if (d + u < d1) dst[(d + u) * step] = Pair{m.first * v[u].first, m.second * v[u].second};
    }
  }
};

// The GPU's L2 size in bytes, 0 when unknown (host spaces).
template <class ExecSpace>
std::int64_t l2_cache_bytes(const ExecSpace& exec) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    return gpu::l2_cache_bytes(exec.cuda_device());
  }
#endif
  (void)exec;
  return 0;
}

// True when the row-pairs path computes exactly what the generic functor would.
template <class MultView, class InView, class OutView>
bool row_pairs_apply(const Slicing& slicing, const MultView& mult, const InView& in, const OutView& out,
                     const std::array<std::int64_t, 3>& ms) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(Pair) == 0; };
  const std::int64_t row = std::int64_t(in.extent(1) * in.extent(2));
  return slicing.allow_row_pairs && slicing.mask() == 6 && ms[0] == 0 && ms[1] == std::int64_t(in.extent(2)) &&
         ms[2] == 1 && row % 2 == 0 && row > 0 && aligned(mult.data()) && aligned(in.data()) && aligned(out.data());
}

template <class ExecSpace, class Index, class MultView, class InView, class OutView>
void launch_row_pairs(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in,
                      const OutView& out) {
  const std::int64_t dates = std::int64_t(in.extent(0)), step = std::int64_t(in.extent(1) * in.extent(2) / 2);
  const std::int64_t wanted = slicing.row_pairs_chunk > 0 ? std::min(slicing.row_pairs_chunk, dates) : dates;
  const std::int64_t chunk = std::max<std::int64_t>(1, wanted);
  const std::int64_t group = std::min(
      step, slicing.row_pairs_group > 0 ? slicing.row_pairs_group : row_pairs_auto_group(l2_cache_bytes(exec), chunk));
  const RowPairsFunctor<Index> functor{mult.data(),  in.data(),    out.data(),
                                       Index(step),  Index(dates), Index(chunk),
                                       Index((dates + chunk - 1) / chunk), Index(group)};
  Kokkos::parallel_for("discount::apply_row_pairs",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, functor.work()), functor);
}

// ---------------------------------------------------------------------------
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

// Largest output (bytes) still written through the cache out of place: the
// last-level cache, where the host reports it.
inline std::int64_t host_streaming_threshold() {
  static const std::int64_t bytes = [] {
    long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return llc > 0 ? std::int64_t(llc) : std::int64_t{32} << 20;
  }();
  return bytes;
}

// d[k] = m[k * mstride] * s[k], k < len; d may equal s. On x86 the contiguous
// cases are written with SSE2 intrinsics: each group is loaded before it is
// stored, so d == s is safe, and the compiler needs no alias check (its
// runtime check would send an in-place call to the scalar loop). Stores start
// on a 64-byte line of d and fill whole lines, four in a row: ahead of one
// 16-byte store per iteration in 2-core runs, non-temporal or not
// (docs/performance.md). d is 8-byte aligned (a double), so the peel reaches
// the line; a d that is not falls through to the scalar loop.
inline void host_run(const double* m, std::int64_t mstride, const double* s, double* d, std::int64_t len,
                     bool stream) {
  std::int64_t k = 0;
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
  if (mstride <= 1 && len > 0) {
    for (; k < len && reinterpret_cast<std::uintptr_t>(d + k) % 64 != 0; ++k) d[k] = m[k * mstride] * s[k];
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
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
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

  // Plane elements [from, to) of entry x of position 0: one run when multBy
  // runs on with one stride across z rows, else one run per z row.
  void plane_run(std::int64_t x, std::int64_t from, std::int64_t to) const {
    const bool joined = ms[1] == ms[2] * extent[2];
    while (from < to) {
      const std::int64_t y = from / extent[2], z = from - y * extent[2];
      const std::int64_t end = joined ? to : std::min(to, (y + 1) * extent[2]);
      const std::int64_t base = x * plane() + from;
      host_run(mult + x * ms[0] + y * ms[1] + z * ms[2], ms[2], in + base, out + base, end - from,
               stream && end - from >= kStreamMinRun);
      from = end;
    }
  }

  // Entries [x0, x1) of position 0, plane elements [lo, hi) of each, except
  // that the first starts at `first_lo` and the last ends at `last_hi`: in
  // column tiles, every x of one column before the next.
  void walk(std::int64_t x0, std::int64_t x1, std::int64_t lo, std::int64_t hi, std::int64_t first_lo,
            std::int64_t last_hi) const {
    if (x1 - x0 == 1) {  // one entry: no multBy to reuse, one pass
      plane_run(x0, first_lo, last_hi);
      return;
    }
    const std::int64_t c0 = std::min(lo, first_lo), c1 = std::max(hi, last_hi);
    for (std::int64_t c = c0; c < c1; c += column)
      for (std::int64_t x = x0; x < x1; ++x) {
        const std::int64_t a = std::max(c, x == x0 ? first_lo : lo);
        const std::int64_t b = std::min(c + column, x + 1 == x1 ? last_hi : hi);
        if (a < b) plane_run(x, a, b);
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
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
    if (stream) _mm_sfence();  // order the non-temporal stores before the kernel's end
#endif
  }
};

// The host loops for `parts` shares (fewer when the slab is small: at least
// one 64-byte line each, or one tile with a user tile). A zero-sized slab
// gives parts = 0.
template <class MultView, class InView, class OutView>
HostLoops make_host_loops(const Slicing& slicing, const MultView& mult, const InView& in, const OutView& out,
                          const std::array<std::int64_t, 3>& ms, int parts) {
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
  loops.column = slicing.host_column > 0 ? slicing.host_column : kHostColumn;
  loops.parts = int(std::min<std::int64_t>(std::max(parts, 1), units));
  const bool distinct = static_cast<const void*>(in.data()) != static_cast<const void*>(out.data());
  const std::int64_t bytes = std::int64_t(out.span() * sizeof(double));
  loops.stream = (distinct || slicing.host_streaming_stores > 1) && (slicing.host_streaming_stores > 0 ||
                              (slicing.host_streaming_stores < 0 && bytes > host_streaming_threshold()));
  return loops;
}

template <class ExecSpace, class MultView, class InView, class OutView>
void launch_host(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in,
                 const OutView& out, const std::array<std::int64_t, 3>& ms) {
  const HostLoops loops = make_host_loops(slicing, mult, in, out, ms, exec.concurrency());
  if (loops.parts == 0) return;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  Kokkos::parallel_for("discount::apply_host", Policy(exec, 0, loops.parts), loops);
}

template <class ExecSpace, class Index, class MultView, class InView, class OutView>
void dispatch(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in,
              const OutView& out, const std::array<std::int64_t, 3>& ms) {
  if constexpr (iterate_reversed<ExecSpace>()) {
    if (row_pairs_apply(slicing, mult, in, out, ms))
      return launch_row_pairs<ExecSpace, Index>(exec, slicing, mult, in, out);
  } else {
    if (slicing.host_loops && slicing.mask() != 0) return launch_host(exec, slicing, mult, in, out, ms);
  }
  switch (slicing.mask()) {
    case 1: launch<ExecSpace, 1, Index>(exec, slicing, mult, in, out, ms); break;
    case 2: launch<ExecSpace, 2, Index>(exec, slicing, mult, in, out, ms); break;
    case 3: launch<ExecSpace, 3, Index>(exec, slicing, mult, in, out, ms); break;
    case 4: launch<ExecSpace, 4, Index>(exec, slicing, mult, in, out, ms); break;
    case 5: launch<ExecSpace, 5, Index>(exec, slicing, mult, in, out, ms); break;
    case 6: launch<ExecSpace, 6, Index>(exec, slicing, mult, in, out, ms); break;
    case 7: launch<ExecSpace, 7, Index>(exec, slicing, mult, in, out, ms); break;
    default: throw config_error("compute.parallel_dims: at least one axis must be parallel");
  }
}

}  // namespace detail

// Kokkos 3.4 does not check kernel launches: a bad launch computes nothing
// and says nothing. Call after a fence; throws std::runtime_error.
inline void check_device_errors(const char* what) { gpu::check_last_error(what); }

template <class MemorySpace>
using SlabView = Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class MemorySpace>
using ConstSlabView =
    Kokkos::View<const double***, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class MemorySpace>
using ConstFlatView =
    Kokkos::View<const double*, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// out(x,y,z) = mult(x*ms[0] + y*ms[1] + z*ms[2]) * in(x,y,z), asynchronous on `exec`.
template <class ExecSpace, class MultView, class InView, class OutView>
void apply_mdrange(const ExecSpace& exec, const Slicing& slicing, const MultView& mult, const InView& in,
                   const OutView& out, const std::array<std::int64_t, 3>& mult_strides) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value, "first argument must be an execution space");
  static_assert(InView::rank == 3 && OutView::rank == 3 && MultView::rank == 1, "slab views are 3-D, multBy 1-D");
  // 32-bit index arithmetic whenever every offset fits (always, for slabs
  // under 16 GiB); 64-bit otherwise.
  const bool narrow = in.span() < std::size_t{1} << 31 && mult.span() < std::size_t{1} << 31;
  if (narrow) detail::dispatch<ExecSpace, int>(exec, slicing, mult, in, out, mult_strides);
  else detail::dispatch<ExecSpace, std::int64_t>(exec, slicing, mult, in, out, mult_strides);
}

}  // namespace discount
