// Every slicing (7 parallel-dim sets) x every axes order x odd shapes, on
// every enabled execution space, against a plain loop, bit for bit. Outputs
// are poisoned with NaN first, so an element no kernel wrote fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernels/apply.hpp"
#include "kernels/features.hpp"
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
#include "kernels/blas.hpp"
#endif
#include "support/kokkos_env.hpp"

using namespace discount;

namespace {

struct Case {
  std::array<std::int64_t, 3> logical;  // dates, ids, nums
  std::array<Axis, 3> axes;
  int mask;
  std::array<std::int64_t, 3> tile;
  bool in_place;
  bool wide_index = false;  // force 64-bit index arithmetic (real slabs need 16 GiB for it)
  std::int64_t chunk = detail::Tuning{}.row_pairs_chunk, group = 0;  // GPU row-pairs path only
  // Host loops only: column tile (0 auto), streaming stores (-1 auto, 0, 1), and `parts` > 0 runs that many
  // shares one after another on this thread (any share count, whatever the thread count).
  std::int64_t column = 0;
  int streaming = -1;
  int parts = 0;
  // The slab starts `offset` elements into its buffers (cv's first 64-byte line boundary moves), with
  // kGuard elements after it: neither those nor the `offset` before may be written.
  std::int64_t offset = 0;
};

constexpr std::int64_t kGuard = 9;

std::array<Axis, 3> permutation(int p) {
  static const std::array<std::array<Axis, 3>, 6> all{{{Axis::date, Axis::id, Axis::num},
                                                       {Axis::id, Axis::date, Axis::num},
                                                       {Axis::date, Axis::num, Axis::id},
                                                       {Axis::num, Axis::date, Axis::id},
                                                       {Axis::id, Axis::num, Axis::date},
                                                       {Axis::num, Axis::id, Axis::date}}};
  return all[p];
}

template <class ExecSpace>
void check(const Case& c, std::mt19937_64& rng) {
  using Memory = typename ExecSpace::memory_space;
  std::array<std::int64_t, 3> extent{}, ms{};
  for (int j = 0; j < 3; ++j) {
    const Axis a = c.axes[j];
    extent[j] = c.logical[static_cast<int>(a)];
    ms[j] = a == Axis::date ? 0 : a == Axis::id ? c.logical[2] : 1;
  }
  const std::int64_t n = extent[0] * extent[1] * extent[2];
  const std::int64_t m = c.logical[1] * c.logical[2];
  std::uniform_real_distribution<double> value(0.25, 4.0);
  const std::int64_t o = c.offset, span = o + n + kGuard;
  Kokkos::View<double*, Kokkos::HostSpace> h_in("discount::test_in", span), h_mult("discount::test_mult", o + m),
      h_out("discount::test_out", span);
  for (std::int64_t e = 0; e < span; ++e) h_in(e) = value(rng);
  for (std::int64_t e = 0; e < o + m; ++e) h_mult(e) = value(rng);
  Kokkos::deep_copy(h_out, std::nan(""));
  auto h_in_before = Kokkos::create_mirror(h_in);
  Kokkos::deep_copy(h_in_before, h_in);

  Kokkos::View<double*, Memory> d_in("discount::test_d_in", span), d_mult("discount::test_d_mult", o + m),
      d_out("discount::test_d_out", span);
  Kokkos::deep_copy(d_in, h_in);
  Kokkos::deep_copy(d_mult, h_mult);
  Kokkos::deep_copy(d_out, h_out);

  Slicing slicing;
  detail::Tuning tuning;
  tuning.row_pairs_chunk = c.chunk;
  tuning.row_pairs_group = c.group;
  tuning.host_column = c.column;
  tuning.host_streaming_stores = c.streaming;
  for (int j = 0; j < 3; ++j) {
    slicing.parallel[j] = (c.mask >> j) & 1;
    slicing.tile[j] = slicing.parallel[j] ? c.tile[j] : 0;
  }
  ExecSpace exec;
  const ConstFlatView<Memory> mult(d_mult.data() + o, m);
  const ConstSlabView<Memory> in(d_in.data() + o, extent[0], extent[1], extent[2]);
  const SlabView<Memory> out((c.in_place ? d_in.data() : d_out.data()) + o, extent[0], extent[1], extent[2]);
  if (c.parts > 0) {
    const detail::HostLoops loops = detail::make_host_loops(slicing, tuning, mult, in, out, ms, c.parts);
    for (int part = 0; part < loops.parts; ++part) loops(part);
  } else if (c.wide_index) {
    detail::dispatch<ExecSpace, std::int64_t>(exec, slicing, tuning, mult, in, out, ms);
  } else {
    apply_mdrange(exec, slicing, mult, in, out, ms, tuning);
  }
  exec.fence();
  check_device_errors("test apply_mdrange");
  Kokkos::deep_copy(h_out, c.in_place ? d_in : d_out);

  // Plain loop over logical indices, mapped to memory positions by hand.
  std::int64_t bad = 0;
  for (std::int64_t d = 0; d < c.logical[0]; ++d)
    for (std::int64_t i = 0; i < c.logical[1]; ++i)
      for (std::int64_t k = 0; k < c.logical[2]; ++k) {
        const std::int64_t logical[3] = {d, i, k};
        std::int64_t pos[3];
        for (int j = 0; j < 3; ++j) pos[j] = logical[static_cast<int>(c.axes[j])];
        const std::int64_t e = o + (pos[0] * extent[1] + pos[1]) * extent[2] + pos[2];
        const double expected = h_mult(o + i * c.logical[2] + k) * h_in_before(e);
        if (std::memcmp(&expected, &h_out(e), sizeof(double)) != 0) ++bad;
      }
  // Nothing outside the slab was written: NaN stays NaN out of place, the input stays in place.
  for (std::int64_t e = 0; e < span; ++e)
    if (e < o || e >= o + n)
      bad += c.in_place ? std::memcmp(&h_out(e), &h_in_before(e), sizeof(double)) != 0 : !std::isnan(h_out(e));
  EXPECT_EQ(bad, 0) << "shape " << c.logical[0] << "x" << c.logical[1] << "x" << c.logical[2] << " axes "
                    << axis_name(c.axes[0]) << "," << axis_name(c.axes[1]) << "," << axis_name(c.axes[2]) << " mask "
                    << c.mask << " in_place " << c.in_place << " tile " << c.tile[0] << "," << c.tile[1] << ","
                    << c.tile[2] << " parts " << c.parts << " column " << c.column << " streaming " << c.streaming
                    << " offset " << c.offset << " space " << ExecSpace::name();
}

template <class ExecSpace>
void sweep() {
  std::mt19937_64 rng(20261129);
  // {1, 295, 3} in [id][date][num] order: the auto tile along ids exceeded
  // CUDA's 64-thread block z once, and nothing was computed.
  // Even (id x num) rows ({9, 502, 5}, {4, 1000, 2}) take the GPU's 16-byte row-pairs path for [id, num].
  const std::array<std::array<std::int64_t, 3>, 9> shapes{
      {{1, 1, 1}, {1, 7, 5}, {7, 13, 3}, {2, 1009, 5}, {13, 1, 2}, {3, 37, 1}, {1, 295, 3}, {9, 502, 5}, {4, 1000, 2}}};
  for (const auto& shape : shapes)
    for (int p = 0; p < 6; ++p)
      for (int mask = 1; mask < 8; ++mask) {
        check<ExecSpace>({shape, permutation(p), mask, {0, 0, 0}, false}, rng);
        check<ExecSpace>({shape, permutation(p), mask, {2, 3, 5}, true}, rng);
        check<ExecSpace>({shape, permutation(p), mask, {0, 0, 0}, false, true}, rng);
      }
}

}  // namespace

TEST(Kernels, DefaultSpaceEverySlicingEveryLayout) { sweep<Kokkos::DefaultExecutionSpace>(); }

TEST(Kernels, HostSpaceEverySlicingEveryLayout) {
  if (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "host space is the default space in this build";
  sweep<Kokkos::DefaultHostExecutionSpace>();
}

TEST(Kernels, HostLoopsEveryShareColumnAndStore) {
  // The host loops cut the slab (or, with a tile, the parallel points) into
  // `parts` contiguous shares, walked in column tiles: shares that
  // start and end mid-row and mid-plane, more shares than points, columns
  // shorter and longer than a row, tiles that do not divide the extents, nums
  // 1..7, one id, one date, streaming stores on and off.
  std::mt19937_64 rng(20261201);
  const std::array<std::array<std::int64_t, 3>, 12> shapes{{{1, 1, 1},
                                                            {1, 9, 4},
                                                            {11, 1, 3},
                                                            {5, 17, 1},
                                                            {6, 23, 2},
                                                            {7, 13, 3},
                                                            {3, 31, 4},
                                                            {4, 19, 5},
                                                            {9, 11, 6},
                                                            {2, 29, 7},
                                                            {13, 101, 5},
                                                            {1, 1009, 3}}};
  const std::array<std::array<std::int64_t, 3>, 3> tiles{{{0, 0, 0}, {2, 3, 5}, {3, 7, 2}}};
  const std::array<std::int64_t, 4> columns{1, 3, 64, 0};
  int pick = 0;
  for (const auto& shape : shapes)
    for (int p = 0; p < 6; ++p)
      for (int mask = 1; mask < 8; ++mask)
        for (int parts : {1, 2, 3, 7, 64}) {
          ++pick;
          Case c{shape, permutation(p), mask, tiles[pick % 3], pick % 2 == 0};
          c.column = columns[pick / 3 % 4];
          c.streaming = pick / 2 % 2;
          c.parts = parts;
          check<Kokkos::DefaultHostExecutionSpace>(c, rng);
        }
}

TEST(Kernels, HostLoopsSharesOnCacheLines) {
  // Every slicing cuts the slab into equal contiguous shares whose boundaries
  // sit on 64-byte lines of cv: slabs starting 0..7 elements past a line, odd
  // sizes, shares of a line or less, more shares than lines, columns that cut
  // dates anywhere, stores cached, non-temporal, and non-temporal in place.
  std::mt19937_64 rng(20261202);
  const std::array<std::array<std::int64_t, 3>, 6> shapes{
      {{1, 1, 1}, {2, 1, 3}, {3, 5, 1}, {7, 13, 3}, {11, 37, 5}, {5, 301, 7}}};
  int pick = 0;
  for (const auto& shape : shapes)
    for (std::int64_t offset = 0; offset < 8; ++offset)
      for (int mask : {1, 2, 4, 6, 7})
        for (int parts : {1, 2, 3, 5, 16, 200}) {
          ++pick;
          Case c{shape, permutation(pick % 6), mask, {0, 0, 0}, pick % 2 == 0};
          c.offset = offset;
          c.parts = parts;
          c.column = std::array<std::int64_t, 4>{1, 5, 64, 0}[pick / 2 % 4];
          c.streaming = std::array<int, 3>{0, 1, 2}[pick / 8 % 3];
          check<Kokkos::DefaultHostExecutionSpace>(c, rng);
        }
}

TEST(Kernels, HostRunEveryAlignmentLengthAndStride) {
  // host_run itself, against a plain loop, bit for bit: runs of 0..80
  // elements starting 0..7 elements past a 64-byte line, multBy per element
  // (stride 1) or one value (stride 0), stores cached and non-temporal, in
  // place and not. On a CPU with AVX-512 the whole lines take that path.
  std::mt19937_64 rng(20261202);
  std::uniform_real_distribution<double> value(0.5, 2.0);
  alignas(64) double m[96], s[96], d[96], want[96];
  for (std::int64_t offset = 0; offset < 8; ++offset)
    for (std::int64_t len = 0; len <= 80; ++len)
      for (std::int64_t stride : {0, 1})
        for (bool stream : {false, true})
          for (bool in_place : {false, true}) {
            for (int i = 0; i < 96; ++i) {
              m[i] = value(rng);
              s[i] = value(rng);
              d[i] = -1.0;
            }
            double* out = in_place ? s + offset : d + offset;
            for (std::int64_t k = 0; k < len; ++k) want[k] = m[k * stride] * s[offset + k];
            detail::host_run(m, stride, s + offset, out, len, stream);
            for (std::int64_t k = 0; k < len; ++k)
              ASSERT_EQ(std::memcmp(&out[k], &want[k], sizeof(double)), 0)
                  << "offset " << offset << " len " << len << " stride " << stride << " k " << k;
            if (!in_place) {  // nothing written past the run
              for (std::int64_t k = offset + len; k < 96; ++k) ASSERT_EQ(d[k], -1.0);
            }
          }
#if DISCOUNT_HOST_AVX512
  RecordProperty("avx512", detail::host_has_avx512() ? "yes" : "no");
#endif
}

TEST(Kernels, HostLoopsSeveralDatesAtOnce) {
  // Planes of a multiple of 8 elements in [date][...] order, with 6 dates or
  // more in a share: the inner dates go kHostDates at a time (one multBy load
  // for several products, where the CPU has AVX-512). Dates left over,
  // shares that start and end mid-plane, column tiles that cut rows, a tile,
  // offsets past a line, streaming stores, in place.
  std::mt19937_64 rng(20261203);
  const std::array<std::array<std::int64_t, 3>, 5> shapes{
      {{6, 8, 1}, {11, 16, 4}, {9, 40, 5}, {17, 24, 3}, {14, 200, 4}}};
  int pick = 0;
  for (const auto& shape : shapes)
    for (int p : {0, 2})  // [date, id, num] and [date, num, id]: date first
      for (int parts : {1, 2, 3})
        for (std::int64_t column : {0, 3, 40})
          for (int streaming : {0, 2}) {
            ++pick;
            Case c{shape, permutation(p), 7,
                   pick % 5 == 0 ? std::array<std::int64_t, 3>{3, 5, 2} : std::array<std::int64_t, 3>{0, 0, 0},
                   pick % 2 == 0};
            c.parts = parts;
            c.column = column;
            c.streaming = streaming;
            c.offset = pick % 8;
            check<Kokkos::DefaultHostExecutionSpace>(c, rng);
          }
#if DISCOUNT_HOST_AVX512
  RecordProperty("avx512", detail::host_has_avx512() ? "yes" : "no");
#endif
}

TEST(Kernels, HostLoopsThroughKokkos) {
  // The same loops launched on the host space's threads, streaming stores
  // forced on, off and by size, on slabs larger than one column tile.
  std::mt19937_64 rng(7);
  for (int streaming : {-1, 0, 1, 2})
    for (int mask = 1; mask < 8; ++mask)
      for (bool in_place : {false, true}) {
        Case c{{5, 2003, 5}, permutation(0), mask, {0, 0, 0}, in_place};
        c.streaming = streaming;
        c.offset = mask % 4;
        check<Kokkos::DefaultHostExecutionSpace>(c, rng);
        c.axes = permutation(4);
        check<Kokkos::DefaultHostExecutionSpace>(c, rng);
      }
}

TEST(Kernels, RowPairsEveryChunkAndGroup) {
  // On a GPU, [id, num] over [date][id][num] with an even row takes the
  // row-pairs path: chunks that do not divide the dates, exceed them or are 0
  // (all dates), groups that do not divide the pairs or exceed them.
  std::mt19937_64 rng(29);
  const std::array<std::array<std::int64_t, 3>, 3> shapes{{{7, 1000, 2}, {9, 502, 5}, {1, 2, 1}}};
  for (const auto& shape : shapes)
    for (std::int64_t chunk : {0, 1, 2, 3, 5, 9, 100})
      for (std::int64_t group : {0, 1, 7, 256, 1255, 5000})
        for (bool in_place : {false, true})
          check<Kokkos::DefaultExecutionSpace>({shape, permutation(0), 6, {0, 0, 0}, in_place, false, chunk, group},
                                               rng);
}

TEST(Kernels, RowPairsGroupFollowsL2) {
  EXPECT_EQ(detail::row_pairs_auto_group(50ll << 20, 2), 131072);  // H100/H200: 2 MiB of multBy per group
  EXPECT_EQ(detail::row_pairs_auto_group(6ll << 20, 2), 16384);    // V100
  EXPECT_EQ(detail::row_pairs_auto_group(50ll << 20, 8), 32768);   // longer chunks move more bytes between visits
  EXPECT_EQ(detail::row_pairs_auto_group(0, 2), 1024);             // unknown L2: the smallest group
  EXPECT_EQ(detail::row_pairs_auto_group(50ll << 20, 0), detail::row_pairs_auto_group(50ll << 20, 1));
}

TEST(Kernels, ManyTilesBeyondOneGridDimension) {
  // 70,001 ids / tile 1 on one dimension: more tiles than a CUDA grid's y or z
  // may hold (65,535). Kokkos 3.4 launched nothing here before our patch.
  std::mt19937_64 rng(5);
  check<Kokkos::DefaultExecutionSpace>({{3, 70001, 5}, permutation(0), 7, {1, 1, 5}, false}, rng);
  check<Kokkos::DefaultExecutionSpace>({{3, 70001, 5}, permutation(0), 7, {5, 1, 1}, false}, rng);
}

#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
template <class ExecSpace>
void check_blas(bool in_place) {
  using Memory = typename ExecSpace::memory_space;
  const std::int64_t dates = 7, ids = 1009, nums = 3, n = dates * ids * nums, m = ids * nums;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> value(0.25, 4.0);
  Kokkos::View<double*, Kokkos::HostSpace> h_in("discount::test_in", n), h_mult("discount::test_mult", m),
      h_out("discount::test_out", n);
  for (std::int64_t e = 0; e < n; ++e) h_in(e) = value(rng);
  for (std::int64_t e = 0; e < m; ++e) h_mult(e) = value(rng);
  Kokkos::View<double*, Memory> d_in("discount::test_d_in", n), d_mult("discount::test_d_mult", m),
      d_out("discount::test_d_out", n);
  Kokkos::deep_copy(d_in, h_in);
  Kokkos::deep_copy(d_mult, h_mult);
  Kokkos::deep_copy(d_out, std::nan(""));
  ExecSpace exec;
  apply_blas(exec, ConstFlatView<Memory>(d_mult.data(), m), ConstSlabView<Memory>(d_in.data(), dates, ids, nums),
             SlabView<Memory>(in_place ? d_in.data() : d_out.data(), dates, ids, nums));
  Kokkos::fence();
  Kokkos::deep_copy(h_out, in_place ? d_in : d_out);
  std::int64_t off_by_more_than_one_ulp = 0, not_exact = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    const double expected = h_mult(e % m) * h_in(e);
    const double got = h_out(e);
    if (!(got == expected || got == std::nextafter(expected, 0.0) || got == std::nextafter(expected, 10.0)))
      ++off_by_more_than_one_ulp;
    not_exact += std::memcmp(&expected, &got, sizeof(double)) != 0;
  }
  EXPECT_EQ(off_by_more_than_one_ulp, 0) << "in_place " << in_place << " space " << ExecSpace::name();
  // On host spaces blas runs the host loops (kernels/blas.hpp): one rounding, bit for bit.
  if (!iterate_reversed<ExecSpace>()) { EXPECT_EQ(not_exact, 0) << "in_place " << in_place; }
}

#endif

TEST(Kernels, BlasMatchesAPlainLoop) {
#ifndef DISCOUNT_HAVE_KOKKOSKERNELS
  GTEST_SKIP() << "built without Kokkos Kernels (compute.kernel: blas is refused)";
#else
  for (bool in_place : {false, true}) {
    check_blas<Kokkos::DefaultExecutionSpace>(in_place);
    check_blas<Kokkos::DefaultHostExecutionSpace>(in_place);
  }
#endif
}
