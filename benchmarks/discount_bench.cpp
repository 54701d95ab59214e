// Kernel, PCIe and device-path benchmarks for discount_app, each against the
// limit measured in the same run (scripts/bench/README.md describes the modes):
//   kernel     data resident in one memory space: a copy against every slicing
//   pcie       pinned host <-> device, each direction alone and both at once
//   stream     the app's pipeline with a source that reads nothing and a sink
//              that writes nothing (under mpirun each rank streams its share)
//   lifecycle  what the CUDA runtime costs a process, timed in child processes
// Every kernel output is poisoned with NaN first and checked element by element.
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char** environ;

#include "commands/commands.hpp"
#include "commands/rank_reports.hpp"
#include "common/affinity.hpp"
#include "common/host_parallel.hpp"
#include "io/input/input.hpp"
#include "io/input/synthetic.hpp"
#include "io/output/output.hpp"
#include "kernels/apply.hpp"
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
#include "kernels/blas.hpp"
#endif
#include "pipeline/pipeline.hpp"
#include "plan/plan.hpp"
#include "ranks/ranks.hpp"
#include "resolve/resolve.hpp"

using namespace discount;
using Clock = std::chrono::steady_clock;

namespace {

// "exact", or how many of the n elements of `out` differ bit for bit from
// mult(j % m) * in(j): the check every kernel variant of the bench ends with.
template <class Mult, class In, class Out>
std::string product_check(std::int64_t n, std::int64_t m, const Mult& mult, const In& in, const Out& out) {
  std::atomic<std::int64_t> bad{0};
  host_parallel(n, std::max(1u, std::thread::hardware_concurrency()), [&](std::int64_t b, std::int64_t e, unsigned) {
    std::int64_t local = 0;
    for (std::int64_t j = b; j < e; ++j) {
      const double expected = mult(j % m) * in(j);
      local += std::memcmp(&expected, &out(j), 8) != 0;
    }
    bad += local;
  });
  return bad == 0 ? "exact" : "WRONG: " + std::to_string(bad.load()) + " elements";
}

// "0-3,8": the CPUs of a mask.
std::string cpu_list(const cpu_set_t& set) {
  std::string text;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    text += (text.empty() ? "" : ",") + std::to_string(c) + (last > c ? "-" + std::to_string(last) : "");
    c = last;
  }
  return text.empty() ? "?" : text;
}

// The host pool's CPU masks, read on each of its threads, and how many CPUs
// they share: fewer CPUs than threads (a one-CPU mask inherited from a parent
// pinned under OMP_PROC_BIND) makes every multi-thread figure invalid.
struct PoolMasks {
  int threads = 0;
  int distinct_threads = 0;  // threads seen running an iteration
  int cpus = 0;              // CPUs in the union of their masks
  std::string text;
};
template <class Exec>
PoolMasks host_pool_masks(const Exec& exec) {
  PoolMasks r;
  r.threads = exec.concurrency();
  std::vector<cpu_set_t> sets(std::size_t(r.threads));
  std::vector<long> tids(std::size_t(r.threads));
  std::vector<int> on(std::size_t(r.threads));
  Kokkos::parallel_for("discount::bench_masks",
                       Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Static>>(exec, 0, r.threads), [&](int t) {
                         CPU_ZERO(&sets[std::size_t(t)]);
                         sched_getaffinity(0, sizeof(cpu_set_t), &sets[std::size_t(t)]);
                         tids[std::size_t(t)] = long(syscall(SYS_gettid));
                         on[std::size_t(t)] = sched_getcpu();
                       });
  exec.fence();
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int t = 0; t < r.threads; ++t) {
    CPU_OR(&all, &all, &sets[std::size_t(t)]);
    r.text += std::string(t ? " [" : "[") + cpu_list(sets[std::size_t(t)]) + "]@" + std::to_string(on[std::size_t(t)]);
  }
  r.cpus = CPU_COUNT(&all);
  r.distinct_threads = int(std::set<long>(tids.begin(), tids.end()).size());
  return r;
}

double median_seconds(int reps, const std::function<void()>& body, const std::function<void()>& before = {}) {
  std::vector<double> times;
  for (int r = -1; r < reps; ++r) {  // r = -1 is the warm-up
    if (before) before();
    Kokkos::fence();
    const auto t0 = Clock::now();
    body();
    Kokkos::fence();
    check_device_errors("benchmark");
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r >= 0) times.push_back(s);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Row {
  std::string name;
  double seconds;
  double bytes;
  std::string note;
};

void print_table(const char* title, const std::vector<Row>& rows, double limit_gbs, const char* limit_name) {
  std::printf("\n%s\n%-44s %12s %10s %9s  %s\n", title, "variant", "median ms", "GB/s", limit_name, "check");
  for (const auto& r : rows) {
    const double gbs = r.bytes / r.seconds / 1e9;
    std::printf("%-44s %12.3f %10.1f %8.1f%%  %s\n", r.name.c_str(), r.seconds * 1e3, gbs,
                limit_gbs > 0 ? 100.0 * gbs / limit_gbs : 0.0, r.note.c_str());
  }
  std::fflush(stdout);
}

template <class ExecSpace>
int kernel_mode(std::int64_t dates, std::int64_t ids, std::int64_t nums, int reps, bool include_slow,
                const std::vector<std::int64_t>& chunk_grid, const std::vector<std::int64_t>& group_grid) {
  using Memory = typename ExecSpace::memory_space;
  const std::int64_t n = dates * ids * nums, m = ids * nums;
  std::printf("kernel mode: %s, shape %lld x %lld x %lld (%.2f GB per array), %d reps (median)\n", ExecSpace::name(),
              (long long)dates, (long long)ids, (long long)nums, n * 8 / 1e9, reps);
  Kokkos::View<double*, Kokkos::HostSpace> h_in(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_h_in"),
                                                n);
  Kokkos::View<double*, Kokkos::HostSpace> h_mult(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_h_mult"), m);
  const auto dk = synthetic::key(1, synthetic::discount), mk = synthetic::key(1, synthetic::multiplier);
  host_parallel(n, std::max(1u, std::thread::hardware_concurrency()), [&](std::int64_t b, std::int64_t e, unsigned) {
    for (std::int64_t j = b; j < e; ++j) h_in(j) = synthetic::value(dk, j);
  });
  for (std::int64_t j = 0; j < m; ++j) h_mult(j) = synthetic::value(mk, j);
  Kokkos::View<double*, Memory> in(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_in"), n);
  Kokkos::View<double*, Memory> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_out"), n);
  Kokkos::View<double*, Memory> mult(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_mult"), m);
  Kokkos::deep_copy(in, h_in);
  Kokkos::deep_copy(mult, h_mult);
  auto h_out = Kokkos::create_mirror_view(out);
  const double elem_bytes = 16.0 * n + 8.0 * m;

  auto poison = [&] { Kokkos::deep_copy(out, std::nan("")); };
  auto check = [&]() -> std::string {
    Kokkos::deep_copy(h_out, out);
    return product_check(n, m, h_mult, h_in, h_out);
  };

  if (!iterate_reversed<ExecSpace>())
    std::printf("(host space: the row-pairs rows run the generic [id, num] functor; row pairs are a GPU path)\n");
  std::vector<Row> rows;
  ExecSpace exec;
  const double copy_s = median_seconds(
      reps, [&] { Kokkos::deep_copy(exec, out, in); }, poison);
  rows.push_back({"copy (deep_copy, 16 B/elem)", copy_s, 16.0 * n, ""});
  const double copy_gbs = 16.0 * n / copy_s / 1e9;

  // The naive flat loop: one index per element, multBy found by a modulo.
  {
    const auto in_c = in, out_c = out, mult_c = mult;
    const std::int64_t row = m;
    const double s = median_seconds(
        reps,
        [&] {
          Kokkos::parallel_for(
              "discount::bench_flat", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n),
              KOKKOS_LAMBDA(std::int64_t j) { out_c(j) = mult_c(j % row) * in_c(j); });
        },
        poison);
    rows.push_back({"flat RangePolicy, j % (ids*nums)", s, elem_bytes, check()});
  }

  const std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};
  const std::array<std::int64_t, 3> ms{0, nums, 1};
  const ConstFlatView<Memory> mult_v(mult.data(), m);
  const ConstSlabView<Memory> in_v(in.data(), dates, ids, nums);
  const SlabView<Memory> out_v(out.data(), dates, ids, nums);
  // chunk and group apply to the row-pairs path only (GPU, [id, num]):
  // chunk -1 keeps the default (2 dates per thread), 0 walks all dates;
  // group 0 picks from the GPU's L2, -1 orders chunk-major.
  struct Variant {
    std::string name;
    std::vector<Axis> dims;
    std::vector<std::int64_t> tile;
    bool slow = false;
    bool row_pairs = true;
    std::int64_t chunk = -1, group = 0;
  };
  const discount::detail::Tuning defaults;
  const std::int64_t auto_group = std::min<std::int64_t>(
      m / 2, discount::detail::row_pairs_auto_group(discount::detail::l2_cache_bytes(exec), defaults.row_pairs_chunk));
  std::vector<Variant> variants{
      {"mdrange [date,id,num] tile auto", {Axis::date, Axis::id, Axis::num}, {}},
      {"mdrange [date,id,num] tile 1x64x5", {Axis::date, Axis::id, Axis::num}, {1, 64, 5}},
      {"mdrange [date,id,num] tile 2x32x5", {Axis::date, Axis::id, Axis::num}, {2, 32, 5}},
      {"mdrange [date,id,num] tile 1x128x5", {Axis::date, Axis::id, Axis::num}, {1, 128, 5}},
      {"[id,num] row pairs, " + std::to_string(defaults.row_pairs_chunk) + " dates per thread, groups of " +
           std::to_string(auto_group) + " (default)",
       {Axis::id, Axis::num},
       {}},
      {"[id,num] row pairs, one thread walks all dates", {Axis::id, Axis::num}, {}, false, true, 0},
      {"mdrange [id,num] (date serial), generic", {Axis::id, Axis::num}, {}, false, false},
      {"mdrange [date,id] (num serial) auto", {Axis::date, Axis::id}, {}},
      {"mdrange [date,num] (id serial) auto", {Axis::date, Axis::num}, {}, true},
      {"per element: mdrange [date,id,num]", {Axis::date, Axis::id, Axis::num}, {}},
      {"per id: range [id] (date, num serial)", {Axis::id}, {}},
      {"per date: range [date] (id, num serial)", {Axis::date}, {}, true},
  };
  // The row pairs over a grid of chunks and groups (--chunks, --groups).
  for (std::int64_t chunk : chunk_grid)
    for (std::int64_t group : group_grid) {
      const std::string g = group > 0    ? "groups of " + std::to_string(group)
                            : group == 0 ? "groups auto"
                                         : "chunk-major";
      Variant v{"[id,num] row pairs, chunks of " + std::to_string(chunk) + " dates, " + g, {Axis::id, Axis::num}, {}};
      v.chunk = chunk;
      v.group = group;
      variants.push_back(v);
    }
  for (const auto& v : variants) {
    if (v.slow && !include_slow) continue;
    const Slicing slicing = make_slicing(axes, v.dims, v.tile);
    discount::detail::Tuning tuning;
    tuning.allow_row_pairs = v.row_pairs;
    if (v.chunk >= 0) tuning.row_pairs_chunk = v.chunk;
    tuning.row_pairs_group = v.group < 0 ? m : v.group;
    const double s = median_seconds(
        v.slow ? 1 : reps, [&] { apply_mdrange(exec, slicing, mult_v, in_v, out_v, ms, tuning); }, poison);
    rows.push_back({v.name, s, elem_bytes, check()});
  }
  // In place, as the pipeline runs it (cv overwrites the discount slab in
  // the device buffer): `out` is reset to the input before each timed run.
  {
    const ConstSlabView<Memory> inout_in(out.data(), dates, ids, nums);
    const auto restore = [&] { Kokkos::deep_copy(out, in); };
    const Slicing slicing = make_slicing(axes, {Axis::id, Axis::num}, {});
    const double s = median_seconds(
        reps, [&] { apply_mdrange(exec, slicing, mult_v, inout_in, out_v, ms); }, restore);
    rows.push_back({"[id,num] default, in place (as the pipeline)", s, elem_bytes, check()});
  }
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
  if (dates > 1) {
    const double s = median_seconds(
        reps, [&] { apply_blas(exec, mult_v, in_v, out_v); }, poison);
    rows.push_back({"KokkosBlas::mult over the slab", s, elem_bytes, check()});
  }
#endif
  print_table("kernel: effective GB/s count 16 B per element + multBy; limit = copy in this run", rows, copy_gbs,
              "of copy");
  return 0;
}

// Host kernel mode: every slicing, out of place and in place, against glibc
// memcpy, interleaved (each round times every variant once, from a rotating
// start); the first round warms up and checks every result. Median, min, max.
struct HostVariant {
  std::string name;
  std::string kind;  // "copy" (16 B per element) or "kernel" (16 B per element + multBy)
  std::function<void()> prepare, body;
  std::function<std::string()> check;
  std::vector<double> seconds;
};

int host_kernel_mode(std::int64_t dates, std::int64_t ids, std::int64_t nums, int rounds, bool include_slow,
                     const std::vector<std::int64_t>& columns, const std::string& json_path) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t n = dates * ids * nums, m = ids * nums;
  const int threads = Exec().concurrency();
  std::printf(
      "host kernel mode: %s, %d threads, shape %lld x %lld x %lld (%.2f GB per array), %d rounds "
      "(interleaved, after a warm-up round)\n",
      Exec::name(), threads, (long long)dates, (long long)ids, (long long)nums, n * 8 / 1e9, rounds);
  using HostView = Kokkos::View<double*, Kokkos::HostSpace>;
  HostView in(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_in"), n);
  HostView out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_out"), n);
  HostView mult(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_mult"), m);
  const auto dk = synthetic::key(1, synthetic::discount), mk = synthetic::key(1, synthetic::multiplier);
  // First touch on the kernel's threads and in its shares, as the pipeline's staging buffers get.
  Kokkos::parallel_for("discount::bench_fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n),
                       [=](std::int64_t j) {
                         in(j) = synthetic::value(dk, j);
                         out(j) = 0.0;
                       });
  for (std::int64_t j = 0; j < m; ++j) mult(j) = synthetic::value(mk, j);
  Kokkos::fence();

  Exec exec;
  // Every peer's threads: the pool's (memcpy on N threads, deep_copy and the
  // kernels run on it) and the main thread (memcpy on 1 thread, also pool thread 0).
  const PoolMasks pool = host_pool_masks(exec);
  cpu_set_t main_mask;
  CPU_ZERO(&main_mask);
  sched_getaffinity(0, sizeof main_mask, &main_mask);
  std::printf(
      "threads: pool %d (%d seen), CPU mask [of each]@running on: %s; main thread [%s]; the process may use "
      "%d CPUs\n",
      pool.threads, pool.distinct_threads, pool.text.c_str(), cpu_list(main_mask).c_str(), process_cpu_count());
  const bool valid = pool.cpus >= pool.threads && pool.distinct_threads == pool.threads;
  if (!valid)
    std::printf(
        "WARNING: the pool's %d threads may use only %d CPUs in all: every multi-thread figure of this run "
        "is INVALID (the process inherited a narrow CPU mask?)\n",
        pool.threads, pool.cpus);
  const std::function<void()> poison = [&] { Kokkos::deep_copy(exec, out, std::nan("")); };
  const std::function<void()> restore = [&] { Kokkos::deep_copy(exec, out, in); };  // in place: out starts as the input
  auto check_product = [&]() -> std::string { return product_check(n, m, mult, in, out); };
  auto check_copy = [&]() -> std::string {
    return std::memcmp(in.data(), out.data(), std::size_t(n) * 8) == 0 ? "exact" : "WRONG";
  };

  std::vector<HostVariant> variants;
  auto variant = [&](const std::string& name, const char* kind, const std::function<void()>& prepare,
                     const std::function<void()>& body, const std::function<std::string()>& check) {
    variants.push_back({name, kind, prepare, body, check, {}});
  };
  // The copy limits: glibc memcpy (non-temporal above its threshold) on every
  // thread in contiguous shares and on one; Kokkos deep_copy for reference.
  double* dst = out.data();
  const double* src = in.data();
  const auto memcpy_share = [=](int t) {
    const std::int64_t b = n * t / threads, e = n * (t + 1) / threads;
    std::memcpy(dst + b, src + b, std::size_t(e - b) * 8);
  };
  variant(
      "copy: glibc memcpy, " + std::to_string(threads) + " threads (limit)", "copy", poison,
      [&] {
        Kokkos::parallel_for("discount::bench_memcpy", Kokkos::RangePolicy<Exec>(exec, 0, threads), memcpy_share);
      },
      check_copy);
  variant(
      "copy: glibc memcpy, 1 thread (limit)", "copy", poison, [&] { std::memcpy(dst, src, std::size_t(n) * 8); },
      check_copy);
  variant(
      "copy: Kokkos deep_copy", "copy", poison, [&] { Kokkos::deep_copy(exec, out, in); }, check_copy);

  const std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};
  const std::array<std::int64_t, 3> ms{0, nums, 1};
  const ConstFlatView<Kokkos::HostSpace> mult_v(mult.data(), m);
  const ConstSlabView<Kokkos::HostSpace> in_v(in.data(), dates, ids, nums), inout_v(out.data(), dates, ids, nums);
  const SlabView<Kokkos::HostSpace> out_v(out.data(), dates, ids, nums);
  auto add = [&](const std::string& name, const Slicing& slicing, bool in_place,
                 const discount::detail::Tuning& tuning = {}) {
    variant(
        name + (in_place ? ", in place" : ", out of place"), "kernel", in_place ? restore : poison,
        [&, slicing, tuning, in_place] {
          apply_mdrange(exec, slicing, mult_v, in_place ? inout_v : in_v, out_v, ms, tuning);
        },
        check_product);
  };
  struct Dims {
    std::string name;
    std::vector<Axis> dims;
    bool slow_generic;  // the generic MDRange of this slicing is slow here: only with --slow
  };
  const std::vector<Dims> all{{"[date,id,num] (default)", {Axis::date, Axis::id, Axis::num}, false},
                              {"[date,id]", {Axis::date, Axis::id}, false},
                              {"[date,num]", {Axis::date, Axis::num}, true},
                              {"[date]", {Axis::date}, true},
                              {"[id,num]", {Axis::id, Axis::num}, false},
                              {"[id]", {Axis::id}, false},
                              {"[num]", {Axis::num}, true}};
  for (const auto& d : all)
    for (bool in_place : {false, true}) add(d.name, make_slicing(axes, d.dims, {}), in_place);
  // Out of place with stores through the cache: each output line is read
  // before it is written (write-allocate), 24 B of traffic per element.
  for (const auto& d : {all[0], all[4]}) {
    discount::detail::Tuning t;
    t.host_streaming_stores = 0;
    add(d.name + " cached stores", make_slicing(axes, d.dims, {}), false, t);
  }
  // In place with non-temporal stores: the line was just read, so the store
  // saves no read; it writes around the cache instead of evicting dirty lines.
  for (const auto& d : {all[0], all[4]}) {
    discount::detail::Tuning t;
    t.host_streaming_stores = 2;
    add(d.name + " streaming stores", make_slicing(axes, d.dims, {}), true, t);
  }
  // Other column tiles (the default is kHostColumn, kernels/detail/host_loops.hpp); a
  // column of a whole date walks each thread's dates one after another.
  for (std::int64_t column : columns)
    for (const auto& d : {all[0], all[4]}) {
      discount::detail::Tuning t;
      t.host_column = column;
      add(d.name + " column " + std::to_string(column), make_slicing(axes, d.dims, {}), true, t);
    }
  // The generic MDRange functor (the host path before the host loops).
  for (const auto& d : all) {
    if (d.slow_generic && !include_slow) continue;
    discount::detail::Tuning t;
    t.host_loops = false;
    add(d.name + " generic MDRange", make_slicing(axes, d.dims, {}), true, t);
  }
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
  if (dates > 1) {
    for (bool in_place : {false, true})
      variant(
          std::string("kernel: blas (host loops), ") + (in_place ? "in place" : "out of place"), "kernel",
          in_place ? restore : poison, [&, in_place] { apply_blas(exec, mult_v, in_place ? inout_v : in_v, out_v); },
          check_product);
    using Matrix =
        Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using ConstMatrix =
        Kokkos::View<const double**, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    variant(
        "KokkosBlas::mult itself, in place", "kernel", restore,
        [&] { KokkosBlas::mult(0.0, Matrix(out.data(), m, dates), 1.0, mult_v, ConstMatrix(out.data(), m, dates)); },
        check_product);
  }
#endif

  for (int r = 0; r <= rounds; ++r)
    for (std::size_t i = 0; i < variants.size(); ++i) {
      auto& v = variants[(i + std::size_t(r)) % variants.size()];
      v.prepare();
      exec.fence();
      const auto t0 = Clock::now();
      v.body();
      exec.fence();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (r == 0) {
        const std::string verdict = v.check();
        if (verdict != "exact") std::printf("%s: %s\n", v.name.c_str(), verdict.c_str());
        v.check = [verdict] { return verdict; };
      } else {
        v.seconds.push_back(s);
      }
    }

  auto bytes_of = [&](const HostVariant& v) { return v.kind == "copy" ? 16.0 * n : 16.0 * n + 8.0 * m; };
  auto median = [](std::vector<double> x) {
    std::sort(x.begin(), x.end());
    return x.size() % 2 ? x[x.size() / 2] : 0.5 * (x[x.size() / 2 - 1] + x[x.size() / 2]);
  };
  double limit = 0;
  for (const auto& v : variants)
    if (v.name.find("(limit)") != std::string::npos) limit = std::max(limit, bytes_of(v) / median(v.seconds) / 1e9);
  std::printf(
      "\nhost kernel: GB/s count 16 B per element + multBy once (copies: 16 B); limit = the faster glibc "
      "memcpy in this run, %.1f GB/s\n%-52s %9s %8s %8s %8s %8s  %s\n",
      limit, "variant", "median ms", "GB/s", "min", "max", "of copy", "check");
  std::FILE* json = json_path.empty() ? nullptr : std::fopen(json_path.c_str(), "w");
  if (json)
    std::fprintf(json,
                 "{\"threads\": %d, \"pool_cpus\": %d, \"pool_masks\": \"%s\", \"valid\": %s, "
                 "\"shape\": [%lld, %lld, %lld], \"variants\": [",
                 threads, pool.cpus, pool.text.c_str(), valid ? "true" : "false", (long long)dates, (long long)ids,
                 (long long)nums);
  bool first = true;
  for (const auto& v : variants) {
    const double med = median(v.seconds), lo = *std::min_element(v.seconds.begin(), v.seconds.end()),
                 hi = *std::max_element(v.seconds.begin(), v.seconds.end());
    const double b = bytes_of(v);
    std::printf("%-52s %9.2f %8.1f %8.1f %8.1f %7.1f%%  %s\n", v.name.c_str(), med * 1e3, b / med / 1e9, b / hi / 1e9,
                b / lo / 1e9, 100.0 * b / med / 1e9 / limit, v.check().c_str());
    if (json) {
      std::fprintf(json, "%s\n {\"name\": \"%s\", \"kind\": \"%s\", \"bytes\": %.0f, \"check\": \"%s\", \"seconds\": [",
                   first ? "" : ",", v.name.c_str(), v.kind.c_str(), b, v.check().c_str());
      for (std::size_t i = 0; i < v.seconds.size(); ++i) std::fprintf(json, "%s%.6f", i ? ", " : "", v.seconds[i]);
      std::fprintf(json, "]}");
    }
    first = false;
  }
  if (json) {
    std::fprintf(json, "\n]}\n");
    std::fclose(json);
  }
  std::fflush(stdout);
  return 0;
}

#ifdef KOKKOS_ENABLE_CUDA
// Returns the bidirectional rate (GB/s), the limit for stream mode.
double pcie_mode(std::size_t bytes, int reps) {
  const std::size_t n = bytes / 8;
  using Pinned = Kokkos::View<double*, Kokkos::CudaHostPinnedSpace>;
  using Device = Kokkos::View<double*, Kokkos::CudaSpace>;
  Pinned h_a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_pinned_a"), n);
  Pinned h_b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_pinned_b"), n);
  Device d_a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_dev_a"), n);
  Device d_b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::bench_dev_b"), n);
  Kokkos::deep_copy(h_a, 1.5);
  Kokkos::deep_copy(d_b, 2.5);
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  double bidirectional = 0;
  {
    Kokkos::Cuda up(s1), down(s2);
    std::vector<Row> rows;
    auto rate = [&](const char* name, double moved, bool h2d, bool d2h) {
      const double s = median_seconds(reps, [&] {
        if (h2d) Kokkos::deep_copy(up, d_a, h_a);
        if (d2h) Kokkos::deep_copy(down, h_b, d_b);
        up.fence();
        down.fence();
      });
      rows.push_back({name, s, moved, ""});
    };
    rate("H2D pinned", double(bytes), true, false);
    rate("D2H pinned", double(bytes), false, true);
    rate("H2D + D2H at once (two streams)", 2.0 * bytes, true, true);
    bidirectional = rows[2].bytes / rows[2].seconds / 1e9;
    print_table("pcie: pinned host <-> device", rows, bidirectional, "of bidir");
  }
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  return bidirectional;
}
#endif

// The device path alone: a source that fills each staging buffer once (with
// ones, so the kernel never meets denormals) and then hands it out as it is,
// and a sink that keeps nothing.
class NoReadSource final : public InputSource {
 public:
  explicit NoReadSource(const InputShape& shape) { shape_ = shape; }
  void read_discount(Range dates, Range ids, double* buffer) override {
    if (!filled_.insert(buffer).second) return;
    const std::int64_t n = dates.size() * ids.size() * shape_.nums;
    std::fill(buffer, buffer + n, 1.0);
  }
  void read_multiplier(Range ids, double* buffer) override {
    std::fill(buffer, buffer + ids.size() * shape_.nums, 1.0);
  }
  std::string describe() const override { return "no reads (device path only)"; }
  std::string identity() const override { return "bench:no-reads"; }
  bool may_hold_nonfinite() const override { return false; }

 private:
  std::set<double*> filled_;
};

class NoWriteSink final : public OutputSink {
 public:
  bool slab_done(const Slab&) const override { return false; }
  void write_slab(const Slab&, const double*, const InputSums& = {}) override {}
  std::string describe() const override { return "no writes (device path only)"; }
};

int stream_mode(std::int64_t dates, std::int64_t ids, std::int64_t nums, const Config& base, int reps,
                double bidirectional_gbs, const std::string& report_path) {
  Config config = base;
  config.input.synthetic = SyntheticSource{dates, ids, nums, 1};
  config.output.mode = OutputMode::checksum;
  config.compute.parallel_dims = {Axis::id, Axis::num};
  NoReadSource input({dates, ids, nums});
  // The app's own path from config to plan: facts, resolve, make_plan.
  const JobSpec spec = resolve(config, system_facts(config, input));
  const Plan plan = make_plan(spec.plan);
  std::printf("\nstream mode: %s, %zu slabs of %.0f MiB, depth %d, %.2f GB through the device path, %d rank(s)\n",
              execution_space_name(spec.pipeline.space).c_str(), plan.slabs.size(), plan.slab_bytes / 1048576.0,
              plan.request.pipeline_depth, plan.output_bytes() / 1e9, ranks::size());
  std::vector<Row> rows;
  RunReport last;
  for (int r = 0; r <= reps; ++r) {
    NoWriteSink sink;
    PipelineJob job;
    job.spec = &spec.pipeline;
    job.plan = &plan;
    job.input = &input;
    job.sink = &sink;
    RunReport report;
    report.stages = empty_stages(plan.request.device_copies);
    ranks::barrier();
    const auto t0 = Clock::now();
    run_pipeline(job, report);
    report.wall_seconds = ranks::max(std::chrono::duration<double>(Clock::now() - t0).count());
    report.ranks = ranks::size();
    combine_rank_reports(report);
    if (r > 0) {
      rows.push_back({"whole run " + std::to_string(r) + " (incl. pinned allocation)", report.wall_seconds,
                      2.0 * plan.output_bytes(), ""});
      rows.push_back({"device path " + std::to_string(r) + " (first H2D to last D2H)", report.device_path_seconds,
                      2.0 * plan.output_bytes(), ""});
    }
    last = report;
  }
  last.outcome = "device-path benchmark (no reads, no writes, no checksum)";
  last.space = execution_space_name(spec.pipeline.space);
  last.slicing = spec.report.slicing;
  last.plan = plan.describe();
  std::printf("stages of the last run:\n%s", last.to_text().c_str());
  print_table("stream: GB/s count H2D + D2H bytes; limit = bidirectional PCIe measured in this run", rows,
              bidirectional_gbs, "of bidir");
  if (!report_path.empty() && ranks::is_root()) write_report(last, report_path);
  return 0;
}

// lifecycle: each child prints its steps' times on one monotonic clock; the
// parent adds the time from the child's return to being reaped (teardown, exit).
double mono_now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

int lifecycle_child(const std::string& mode) {
  std::printf("main %.6f\n", mono_now());
#ifdef KOKKOS_ENABLE_CUDA
  if (mode != "none") {
    auto check = [](cudaError_t e, const char* what) {
      if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
      }
    };
    int n = 0;
    check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    std::printf("init %.6f\n", mono_now());
    check(cudaFree(nullptr), "cudaFree(0)");
    std::printf("context %.6f\n", mono_now());
    void* p = nullptr;
    if (mode == "pin_small_first") {  // is a process's first pinning a fixed cost that a small one absorbs?
      check(cudaHostAlloc(&p, 4096, cudaHostAllocDefault), "cudaHostAlloc 4 KiB");
      std::printf("pin_4KiB %.6f\n", mono_now());
      check(cudaHostAlloc(&p, 96u << 20, cudaHostAllocDefault), "cudaHostAlloc 96 MiB");
      std::printf("pin_96MiB %.6f\n", mono_now());
    }
    if (mode.rfind("alloc", 0) == 0) {  // the app's allocations in a device job of memory.staging: none
      check(cudaMalloc(&p, 128u << 20), "cudaMalloc");
      check(cudaHostAlloc(&p, 96u << 20, cudaHostAllocDefault), "cudaHostAlloc");
      for (int i = 0; i < 32; ++i) {
        cudaStream_t s{};
        check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
      }
      std::printf("alloc %.6f\n", mono_now());
    }
  }
#endif
  std::printf("return %.6f\n", mono_now());
  std::fflush(stdout);
  // "_exit": no runtime teardown; the driver still releases the context as the files close.
  if (mode.find("_exit") != std::string::npos) _exit(0);
  return 0;
}

void lifecycle_run(const std::string& mode) {
  int out[2];
  if (pipe(out) != 0) std::exit(1);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  std::string self = "/proc/self/exe", flag = "--lifecycle-child", m = mode;
  char* argv[] = {self.data(), flag.data(), m.data(), nullptr};
  const double spawned = mono_now();
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), &fa, nullptr, argv, environ) != 0) std::exit(1);
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t r; (r = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, std::size_t(r));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const double reaped = mono_now();
  std::printf("%-16s total %.3f s:", mode.c_str(), reaped - spawned);
  double last = spawned;
  char name[64];
  double t = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    if (std::sscanf(text.substr(at, nl - at).c_str(), "%63s %lf", name, &t) == 2) {
      std::printf(" %s %.3f", std::strcmp(name, "main") == 0 ? "exec" : name, t - last);
      last = t;
    }
    at = nl + 1;
  }
  std::printf(" exit %.3f\n", reaped - last);
  std::fflush(stdout);
}

int lifecycle_mode(int rounds) {
#ifdef KOKKOS_ENABLE_CUDA
  const std::vector<std::string> modes{"none", "context", "context_exit", "alloc", "alloc_exit", "pin_small_first"};
#else
  std::printf("lifecycle: not a CUDA build, only the process without CUDA calls\n");
  const std::vector<std::string> modes{"none"};
#endif
  std::printf("lifecycle: %d rounds; each step's seconds from the previous one, exit = return to reaped\n", rounds);
  for (int r = 0; r < rounds; ++r)
    for (const auto& mode : modes) lifecycle_run(mode);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // lifecycle runs before MPI and Kokkos start here: no context of this process's own.
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "--lifecycle-child") return lifecycle_child(args[1]);
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--mode" && args[i + 1] == "lifecycle") {
      int rounds = 3;
      for (std::size_t j = 0; j + 1 < args.size(); ++j)
        if (args[j] == "--reps") rounds = std::atoi(args[j + 1].c_str());
      return lifecycle_mode(rounds);
    }
  ranks::Session mpi(argc, argv);
  // Under mpirun every rank streams its own share; rank 0 alone prints.
  if (!ranks::is_root() && !std::freopen("/dev/null", "w", stdout)) return 1;
  std::vector<std::string> kokkos_args = kokkos_arguments(std::vector<std::string>(argv + 1, argv + argc));
  std::vector<char*> kokkos_argv;
  for (auto& arg : kokkos_args) kokkos_argv.push_back(arg.data());
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  Kokkos::ScopeGuard guard(kokkos_argc, kokkos_argv.data());
  CLI::App app{"discount_app benchmarks: kernel, pcie, stream, lifecycle"};
  std::string mode = "kernel", space_name = "device";
  std::int64_t dates = 200, ids = 1000000, nums = 5;
  int reps = 10, depth = 3;
  double gib = 2.0, slab_mib = 512;
  std::string host_budget = "1TiB", device_budget = "1TiB", report_path;
  bool slow = false;
  std::vector<std::int64_t> chunk_grid, group_grid{0}, columns;
  std::string json_path;
  app.add_option("--mode", mode, "kernel | pcie | stream | lifecycle")
      ->check(CLI::IsMember({"kernel", "pcie", "stream", "lifecycle"}));
  app.add_option("--space", space_name, "device | host")->check(CLI::IsMember({"device", "host"}));
  app.add_option("--dates", dates);
  app.add_option("--ids", ids);
  app.add_option("--nums", nums);
  app.add_option("--reps", reps);
  app.add_option("--pcie-gib", gib, "bytes per transfer in pcie mode");
  app.add_option("--slab-mib", slab_mib, "slab size in stream mode");
  app.add_option("--depth", depth, "pipeline depth in stream mode");
  app.add_option("--host-budget", host_budget, "stream mode: memory.host_budget (default 1TiB: --slab-mib decides)");
  app.add_option("--device-budget", device_budget, "stream mode: memory.device_budget (default 1TiB)");
  app.add_option("--report", report_path, "stream mode: the last run's JSON report (every rank's, combined)");
  app.add_flag("--slow", slow, "include the slow serial slicings (per date, id serial)");
  app.add_option("--chunks", chunk_grid,
                 "kernel mode: also time the row pairs with dates cut into chunks of these sizes");
  app.add_option("--groups", group_grid,
                 "kernel mode: ... in groups of these many pairs (0: from L2, -1: chunk-major)");
  app.add_option("--columns", columns,
                 "kernel mode on the host: also time the default and [id,num] in place with these column tiles");
  app.add_option("--json", json_path, "kernel mode on the host: write every timing here");
  app.allow_extras();
  CLI11_PARSE(app, argc, argv);
  const Space space = space_name == "host" ? Space::host : Space::device;
  if (mode == "kernel") {
    if (space == Space::host) return host_kernel_mode(dates, ids, nums, reps, slow, columns, json_path);
    return kernel_mode<Kokkos::DefaultExecutionSpace>(dates, ids, nums, reps, slow, chunk_grid, group_grid);
  }
  double bidirectional = 0;
#ifdef KOKKOS_ENABLE_CUDA
  if (mode == "pcie" || mode == "stream") bidirectional = pcie_mode(static_cast<std::size_t>(gib * (1 << 30)), reps);
#else
  if (mode == "pcie") std::printf("pcie mode needs a CUDA build\n");
#endif
  if (mode == "pcie") return 0;
  Config config;
  config.compute.space = space;
  config.memory.pipeline_depth = depth;
  config.memory.max_slab = MemorySize{false, 0.0, static_cast<std::uint64_t>(slab_mib * 1048576)};
  config.memory.host_budget = parse_memory_size(host_budget);
  config.memory.device_budget = parse_memory_size(device_budget);
  return stream_mode(dates, ids, nums, config, reps, bidirectional, report_path);
}
