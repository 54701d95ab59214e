// Why the host loops take several dates per multBy load (issue 23's host
// target: multiply at >= 80% of a same-thread copy). On 20 x 400k x 5
// doubles, two OpenMP threads each walk their contiguous half of the slab in
// column tiles of 65536 elements (as lib/kernels/detail/host_loops.hpp does)
// with non-temporal stores, and multiply
//   sse2      one date at a time, 16-byte SSE2 groups (the loops until 2026-12-02);
//   avx512    one date at a time, one 64-byte line per instruction;
//   dates G   G dates at a time, AVX-512: one multBy load serves G products;
// against glibc's memcpy of the same bytes. Medians of 25 calls, three rounds.
//   g++ -O3 -fopenmp scripts/bench/cpp/host_dates.cpp -o /tmp/host_dates && OMP_PROC_BIND=false /tmp/host_dates
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using I = std::int64_t;
constexpr I kDates = 20, kPlane = 400000 * 5, kColumn = 65536;
double *mult, *in, *out;

void sse2_run(const double* m, const double* s, double* d, I len) {
  I k = 0;
  for (; k < len && reinterpret_cast<std::uintptr_t>(d + k) % 64 != 0; ++k) d[k] = m[k] * s[k];
  for (; k + 8 <= len; k += 8)
    for (int j = 0; j < 8; j += 2)
      _mm_stream_pd(d + k + j, _mm_mul_pd(_mm_loadu_pd(m + k + j), _mm_loadu_pd(s + k + j)));
  for (; k < len; ++k) d[k] = m[k] * s[k];
}

// G dates from (s, d), kPlane elements apart; d + g * kPlane alike on 64-byte lines.
template <int G>
__attribute__((target("avx512f"))) void avx512_run(const double* m, const double* s, double* d, I len) {
  I k = 0;
  for (; k < len && reinterpret_cast<std::uintptr_t>(d + k) % 64 != 0; ++k)
    for (int g = 0; g < G; ++g) d[g * kPlane + k] = m[k] * s[g * kPlane + k];
  for (; k + 8 <= len; k += 8) {
    const __m512d f = _mm512_loadu_pd(m + k);
    for (int g = 0; g < G; ++g)
      _mm512_stream_pd(d + g * kPlane + k, _mm512_mul_pd(f, _mm512_loadu_pd(s + g * kPlane + k)));
  }
  for (; k < len; ++k)
    for (int g = 0; g < G; ++g) d[g * kPlane + k] = m[k] * s[g * kPlane + k];
}

// Each thread: its half of the dates, column tile by column tile, G dates at a time.
template <int G, class Run>
void walk(Run run) {
#pragma omp parallel num_threads(2)
  {
    const int p = omp_get_thread_num();
    const I x0 = kDates * p / 2, x1 = kDates * (p + 1) / 2;
    for (I c = 0; c < kPlane; c += kColumn) {
      const I len = std::min(kColumn, kPlane - c);
      I x = x0;
      for (; x + G <= x1; x += G) run(mult + c, in + x * kPlane + c, out + x * kPlane + c, len);
      for (; x < x1; ++x) avx512_run<1>(mult + c, in + x * kPlane + c, out + x * kPlane + c, len);
    }
    _mm_sfence();
  }
}

void copy() {
  const I n = kDates * kPlane;
#pragma omp parallel num_threads(2)
  {
    const int p = omp_get_thread_num();
    const I a = n * p / 2, b = n * (p + 1) / 2;
    std::memcpy(out + a, in + a, static_cast<std::size_t>(b - a) * sizeof(double));
  }
}

template <class F>
double median_seconds(F f) {
  std::vector<double> t;
  for (int r = 0; r < 25; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("this CPU has no AVX-512F\n");
    return 1;
  }
  mult = static_cast<double*>(std::aligned_alloc(64, kPlane * sizeof(double)));
  in = static_cast<double*>(std::aligned_alloc(64, kDates * kPlane * sizeof(double)));
  out = static_cast<double*>(std::aligned_alloc(64, kDates * kPlane * sizeof(double)));
  for (I i = 0; i < kPlane; ++i) mult[i] = 1.0 + static_cast<double>(i) * 1e-9;
  for (I i = 0; i < kDates * kPlane; ++i) in[i] = out[i] = 0.5 + static_cast<double>(i) * 1e-12;
  std::printf("20 x 400k x 5 doubles, 2 threads, 640 MB moved per call; median seconds of 25 calls\n");
  std::printf("%-8s %-8s %-8s %-8s %-8s %-8s\n", "memcpy", "sse2", "avx512", "dates 2", "dates 4", "dates 5");
  for (int round = 0; round < 3; ++round) {
    const double tm = median_seconds(copy);
    const double ts = median_seconds([] { walk<1>(sse2_run); });
    const double t1 = median_seconds([] { walk<1>(avx512_run<1>); });
    const double t2 = median_seconds([] { walk<2>(avx512_run<2>); });
    const double t4 = median_seconds([] { walk<4>(avx512_run<4>); });
    const double t5 = median_seconds([] { walk<5>(avx512_run<5>); });
    std::printf("%-8.4f %-8.4f %-8.4f %-8.4f %-8.4f %-8.4f\n", tm, ts, t1, t2, t4, t5);
  }
  std::free(mult);
  std::free(in);
  std::free(out);
}
