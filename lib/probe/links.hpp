// The copy and kernel links timed on this machine: h2d, d2h and the kernel,
// with Kokkos. The disk links are timed by probe/io_rates.hpp (plan) or not
// at all (run: the report gives each stage's own rate).
#pragma once

#include <cstdint>

#include "plan/limits.hpp"

namespace discount {

// Call after Kokkos::initialize. Starts from configured_limits and, unless
// config.measure is false, measures each copy/kernel link the job uses that
// is not configured (a few repetitions over 256 MiB buffers, the best one;
// well under a second):
//  - device_copies (kernel in a device memory space): h2d and d2h as
//    Kokkos::deep_copy between pinned host memory and the device, kernel as a
//    device-to-device copy counted as bytes read + bytes written;
//  - otherwise kernel as an in-place parallel pass over host memory in
//    Kokkos::DefaultHostExecutionSpace, bytes read + bytes written.
// Disk links are never measured. A measurement that fails (no memory) leaves
// its link unknown rather than failing the job.
// max_buffer_bytes caps the measuring buffers (256 MiB each by default) so a
// job with a small memory budget stays within it.
Limits measure_limits(const LimitsConfig& config, bool device_copies,
                      std::uint64_t max_buffer_bytes = std::uint64_t{256} << 20);

}  // namespace discount
