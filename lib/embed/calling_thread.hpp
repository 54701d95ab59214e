// multiply() on the calling thread: arrays already in RAM whose work is too
// small to repay the engine's thread team. No Kokkos, no engine thread, no
// plan, no staging: one loop over the arrays as they lie (any strides,
// float32 mult or disc widened exactly), in chunks of 256 KiB that helper
// threads share only while they have idle cores to run on. A call costs what
// the loop costs, and a busy machine cannot stall it at a barrier waiting for
// a descheduled thread. Calls from several threads run at once. Pure C++: it
// needs no Kokkos and works in any process, a forked child included.
#pragma once

#include <array>
#include <cstdint>

#include "common/axis.hpp"
#include "io/input/memory_arrays.hpp"

namespace discount::embed {

// Bytes of disc + out up to which the Python package runs a host call here
// rather than on the engine's thread team. From scripts/bench/python_calls.py
// on the 2-core VM (2026-12-04): quiet, this path (with its helpers) beat the
// team up to 41 MB of disc (1.7 against 2.1 ms) and tied it at 82 MB, where
// the team's streaming stores start to pay; with two busy loops beside it
// the team took 6-18 ms at every size up to 82 MB, this path 0.03-14 ms.
constexpr std::uint64_t kCallingThreadBytes = std::uint64_t{128} << 20;

// out = mult * disc broadcast over dates, disc's axes in the order `axes`
// names. mult and disc float64 or float32, out float64; out may be disc
// itself (in place) and must not otherwise overlap the inputs (the caller
// checks). Returns the seconds the loop took.
double multiply_on_calling_thread(const ArrayRef& mult, const ArrayRef& disc, const ArrayRef& out,
                                  const std::array<Axis, 3>& axes);

}  // namespace discount::embed
