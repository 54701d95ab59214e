#include "probe/links.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>

#include "config/config.hpp"
#include "backend/spaces.hpp"

namespace discount {

namespace {

// Buffers of 256 MiB: large enough that launch and setup costs vanish, small
// enough that the whole measurement stays well under a second.
// The caller may cap them (a job's memory budget below 1 GiB): see measure_limits.
constexpr std::size_t kBufferBytes = std::size_t{256} << 20;
constexpr int kRepetitions = 3;  // the best counts
// Past this much time in measure_limits (a slow or busy machine), each link
// gets one timed run instead of kRepetitions.
constexpr double kSoftBudgetSeconds = 0.2;

using Clock = std::chrono::steady_clock;

// Seconds of the fastest of up to kRepetitions runs of `body`, after an
// untimed warm-up unless the caller has already touched the memory.
template <class Body>
double best_seconds(Clock::time_point start, bool warm_up, Body&& body) {
  if (warm_up) body();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < kRepetitions; ++r) {
    const auto t0 = Clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    if (std::chrono::duration<double>(Clock::now() - start).count() > kSoftBudgetSeconds) break;
  }
  return best;
}

void set_measured(LinkLimit& link, double bytes, double seconds) {
  if (seconds > 0 && std::isfinite(seconds)) link = {bytes / seconds / 1e9, LinkSource::measured};
}

// The host kernel's limit: an in-place pass (read, scale, write back) over
// host memory on every host thread, as the host kernel works on its staging
// buffer. The factor is read at run time so the pass cannot be elided.
void measure_host_kernel(LinkLimit& kernel, std::size_t bytes, Clock::time_point start) {
  const std::size_t elements = bytes / sizeof(double);
  using Host = Kokkos::DefaultHostExecutionSpace;
  Kokkos::View<double*, Kokkos::HostSpace> buffer(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "discount::limits_host"), elements);
  double* data = buffer.data();
  const Kokkos::RangePolicy<Host> policy(0, static_cast<std::int64_t>(elements));
  // First touch from the same threads that will run the passes.
  Kokkos::parallel_for("discount::limits_touch", policy, [=](const std::int64_t i) { data[i] = 1.0; });
  Host().fence();
  volatile double runtime_one = 1.0;
  const double factor = runtime_one;
  // The first touch was the warm-up.
  const double seconds = best_seconds(start, false, [&] {
    Kokkos::parallel_for("discount::limits_host_pass", policy, [=](const std::int64_t i) { data[i] *= factor; });
    Host().fence();
  });
  set_measured(kernel, 2.0 * bytes, seconds);
}

// Copies between page-locked host memory and the default execution space's
// memory, and within the latter. The pinned staging space is the pipeline's
// (backend/spaces.hpp): plain host memory in a build without a GPU.
using PinnedSpace = PinnedHostSpace;

void measure_device_links(Limits& limits, bool want_h2d, bool want_d2h, bool want_kernel, std::size_t bytes,
                          Clock::time_point start) {
  const std::size_t elements = bytes / sizeof(double);
  using DeviceMemory = Kokkos::DefaultExecutionSpace::memory_space;
  using DeviceView = Kokkos::View<double*, DeviceMemory>;
  const auto no_init = [](const char* label) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
  };
  DeviceView device(no_init("discount::limits_device"), elements);
  // One timed copy direction; a failure leaves that link unknown.
  const auto time_copy = [&](LinkLimit& link, double counted_bytes, auto&& dst, auto&& src) {
    try {
      set_measured(link, counted_bytes, best_seconds(start, true, [&] {
                     Kokkos::deep_copy(dst, src);
                     Kokkos::fence();
                   }));
    } catch (const std::exception&) {}
  };
  if (want_h2d || want_d2h) {
    Kokkos::View<double*, PinnedSpace> pinned(no_init("discount::limits_pinned"), elements);
    if (want_h2d) time_copy(limits.h2d, bytes, device, pinned);
    if (want_d2h) time_copy(limits.d2h, bytes, pinned, device);
  }
  if (want_kernel) {
    // The kernel stage counts the slab read and written (plus the small
    // multBy): a device copy's read + write bytes are the matching limit.
    DeviceView other(no_init("discount::limits_device_copy"), elements);
    time_copy(limits.kernel, 2.0 * bytes, other, device);
  }
}

}  // namespace

Limits measure_limits(const LimitsConfig& config, bool device_copies, std::uint64_t max_buffer_bytes) {
  Limits limits = configured_limits(config);
  if (!config.measure || !Kokkos::is_initialized()) return limits;
  const std::size_t bytes =
      std::max<std::size_t>(std::min<std::uint64_t>(kBufferBytes, max_buffer_bytes) / sizeof(double), 1) *
      sizeof(double);
  const auto start = Clock::now();
  try {
    if (device_copies)
      measure_device_links(limits, !config.h2d, !config.d2h, !config.kernel, bytes, start);
    else if (!config.kernel)
      measure_host_kernel(limits.kernel, bytes, start);
  } catch (const std::exception&) {
    // Not enough memory for the buffers, say: the links stay unknown.
  }
  return limits;
}

}  // namespace discount
