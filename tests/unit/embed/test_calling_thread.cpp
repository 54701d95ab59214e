// multiply on the calling thread (lib/embed/calling_thread): every axes order,
// float32 inputs, strided and in-place arrays, sizes of one chunk and of many
// (the helpers' share), and calls from several threads at once, each against
// a plain loop over indices, bit for bit, into outputs poisoned with NaN.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "embed/calling_thread.hpp"

using namespace discount;

namespace {

constexpr std::array<std::array<Axis, 3>, 6> kOrders{{{Axis::date, Axis::id, Axis::num},
                                                      {Axis::date, Axis::num, Axis::id},
                                                      {Axis::id, Axis::date, Axis::num},
                                                      {Axis::id, Axis::num, Axis::date},
                                                      {Axis::num, Axis::date, Axis::id},
                                                      {Axis::num, Axis::id, Axis::date}}};

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> magnitude(0.25, 4.0);
  std::vector<T> values(n);
  for (auto& v : values) v = static_cast<T>(magnitude(rng) * (rng() % 2 ? 1.0 : -1.0));
  return values;
}

// An array over `data` with element strides `strides`.
ArrayRef array_of(void* data, ElementType type, int rank, std::array<std::int64_t, 3> shape,
                  std::array<std::int64_t, 3> strides) {
  ArrayRef a;
  a.data = data;
  a.type = type;
  a.rank = rank;
  a.shape = shape;
  a.strides = strides;
  return a;
}

std::array<std::int64_t, 3> c_strides(std::array<std::int64_t, 3> shape, int rank) {
  std::array<std::int64_t, 3> s{};
  std::int64_t stride = 1;
  for (int j = rank - 1; j >= 0; --j) {
    s[static_cast<std::size_t>(j)] = stride;
    stride *= shape[static_cast<std::size_t>(j)];
  }
  return s;
}

template <class M, class D>
double element(const M* mult, const ArrayRef& m, const D* disc, const ArrayRef& d, std::array<Axis, 3> axes,
               std::array<std::int64_t, 3> at) {
  std::int64_t id = 0, num = 0;
  for (std::size_t j = 0; j < 3; ++j) {
    if (axes[j] == Axis::id) id = at[j];
    if (axes[j] == Axis::num) num = at[j];
  }
  const double factor = static_cast<double>(mult[id * m.strides[0] + num * m.strides[1]]);
  return factor * static_cast<double>(disc[at[0] * d.strides[0] + at[1] * d.strides[1] + at[2] * d.strides[2]]);
}

// Every element of out against the plain loop's product, by bit pattern.
template <class M, class D>
void expect_exact(const M* mult, const ArrayRef& m, const D* disc, const ArrayRef& d, const double* out,
                  const ArrayRef& o, std::array<Axis, 3> axes) {
  std::int64_t wrong = 0;
  std::array<std::int64_t, 3> at{};
  for (at[0] = 0; at[0] < d.shape[0]; ++at[0])
    for (at[1] = 0; at[1] < d.shape[1]; ++at[1])
      for (at[2] = 0; at[2] < d.shape[2]; ++at[2]) {
        const double want = element(mult, m, disc, d, axes, at);
        const double got = out[at[0] * o.strides[0] + at[1] * o.strides[1] + at[2] * o.strides[2]];
        wrong += std::memcmp(&want, &got, sizeof(double)) != 0;
      }
  EXPECT_EQ(wrong, 0);
}

// disc's shape for (dates, ids, nums) in the order axes names.
std::array<std::int64_t, 3> shape_in(std::array<Axis, 3> axes, std::int64_t dates, std::int64_t ids,
                                     std::int64_t nums) {
  std::array<std::int64_t, 3> shape{};
  for (std::size_t j = 0; j < 3; ++j) shape[j] = axes[j] == Axis::date ? dates : axes[j] == Axis::id ? ids : nums;
  return shape;
}

template <class M, class D>
void check_case(std::array<Axis, 3> axes, std::int64_t dates, std::int64_t ids, std::int64_t nums,
                std::mt19937_64& rng) {
  const auto shape = shape_in(axes, dates, ids, nums);
  const auto n = static_cast<std::size_t>(dates * ids * nums);
  auto mult = random_values<M>(static_cast<std::size_t>(ids * nums), rng);
  auto disc = random_values<D>(n, rng);
  std::vector<double> out(n, std::numeric_limits<double>::quiet_NaN());
  const ArrayRef m = array_of(mult.data(), sizeof(M) == 4 ? ElementType::f32 : ElementType::f64, 2, {ids, nums, 0},
                              c_strides({ids, nums, 0}, 2));
  const ArrayRef d =
      array_of(disc.data(), sizeof(D) == 4 ? ElementType::f32 : ElementType::f64, 3, shape, c_strides(shape, 3));
  const ArrayRef o = array_of(out.data(), ElementType::f64, 3, shape, c_strides(shape, 3));
  const double seconds = embed::multiply_on_calling_thread(m, d, o, axes);
  EXPECT_GE(seconds, 0.0);
  expect_exact(mult.data(), m, disc.data(), d, out.data(), o, axes);
}

}  // namespace

TEST(CallingThread, EveryAxesOrderOneChunkAndManyExact) {
  std::mt19937_64 rng(11);
  for (const auto& axes : kOrders) {
    check_case<double, double>(axes, 3, 7, 5, rng);      // one chunk
    check_case<double, double>(axes, 9, 20011, 5, rng);  // many chunks, odd sizes
    check_case<double, double>(axes, 1, 65537, 1, rng);  // one long run cut into chunks
  }
}

TEST(CallingThread, Float32InputsWidenExactly) {
  std::mt19937_64 rng(12);
  for (const auto& axes : {kOrders[0], kOrders[3]}) {
    check_case<float, double>(axes, 5, 9001, 3, rng);
    check_case<double, float>(axes, 5, 9001, 3, rng);
    check_case<float, float>(axes, 2, 13, 5, rng);
  }
}

TEST(CallingThread, StridedViewsAndInPlace) {
  std::mt19937_64 rng(13);
  const std::int64_t dates = 6, ids = 12007, nums = 5;
  // disc a view of every other id of a larger array; out Fortran-ordered.
  auto big = random_values<double>(static_cast<std::size_t>(dates * 2 * ids * nums), rng);
  const ArrayRef d = array_of(big.data(), ElementType::f64, 3, {dates, ids, nums}, {2 * ids * nums, 2 * nums, 1});
  auto mult = random_values<double>(static_cast<std::size_t>(ids * nums * 3), rng);
  const ArrayRef m = array_of(mult.data(), ElementType::f64, 2, {ids, nums, 0}, {3 * nums, 3, 0});  // strided mult
  std::vector<double> out(static_cast<std::size_t>(dates * ids * nums), std::numeric_limits<double>::quiet_NaN());
  const ArrayRef o = array_of(out.data(), ElementType::f64, 3, {dates, ids, nums}, {1, dates, dates * ids});
  embed::multiply_on_calling_thread(m, d, o, kOrders[0]);
  expect_exact(mult.data(), m, big.data(), d, out.data(), o, kOrders[0]);

  // In place: out is disc.
  auto disc = random_values<double>(static_cast<std::size_t>(dates * ids * nums), rng);
  const auto before = disc;
  const ArrayRef in_place =
      array_of(disc.data(), ElementType::f64, 3, {dates, ids, nums}, c_strides({dates, ids, nums}, 3));
  const ArrayRef contiguous_mult = array_of(mult.data(), ElementType::f64, 2, {ids, nums, 0}, {nums, 1, 0});
  embed::multiply_on_calling_thread(contiguous_mult, in_place, in_place, kOrders[0]);
  const ArrayRef was = array_of(const_cast<double*>(before.data()), ElementType::f64, 3, {dates, ids, nums},
                                c_strides({dates, ids, nums}, 3));
  expect_exact(mult.data(), contiguous_mult, before.data(), was, disc.data(), in_place, kOrders[0]);
}

// Several threads calling at once: one of them has the helpers, the others
// run alone; every result is exact, call after call (a helper that woke late
// must not touch a later call's chunks).
TEST(CallingThread, ConcurrentCallsExact) {
  constexpr int kThreads = 4, kCalls = 25;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &failures] {
      std::mt19937_64 rng(100 + static_cast<unsigned>(t));
      for (int c = 0; c < kCalls; ++c) {
        const std::int64_t dates = 2 + c % 3, ids = 10007 + 97 * t, nums = 5;
        auto mult = random_values<double>(static_cast<std::size_t>(ids * nums), rng);
        auto disc = random_values<double>(static_cast<std::size_t>(dates * ids * nums), rng);
        std::vector<double> out(disc.size(), std::numeric_limits<double>::quiet_NaN());
        const ArrayRef m = array_of(mult.data(), ElementType::f64, 2, {ids, nums, 0}, {nums, 1, 0});
        const ArrayRef d = array_of(disc.data(), ElementType::f64, 3, {dates, ids, nums}, {ids * nums, nums, 1});
        const ArrayRef o = array_of(out.data(), ElementType::f64, 3, {dates, ids, nums}, {ids * nums, nums, 1});
        embed::multiply_on_calling_thread(m, d, o, kOrders[0]);
        for (std::size_t e = 0; e < out.size(); ++e) {
          const double want = mult[e % static_cast<std::size_t>(ids * nums)] * disc[e];
          if (std::memcmp(&want, &out[e], sizeof(double)) != 0) {
            ++failures[static_cast<std::size_t>(t)];
            break;
          }
        }
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<std::size_t>(t)], 0) << "thread " << t;
}
