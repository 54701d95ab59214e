// multiply() on the calling thread: arrays already in RAM whose work is too
// small to repay a thread team. No Kokkos, no engine thread, no plan, no
// staging: one loop over the arrays as they lie (any strides, float32 mult
// or disc widened exactly), so a call costs what the loop costs and a busy
// machine cannot stall it at a team's barrier waiting for a descheduled
// thread. Calls from several threads run at once. Pure C++: it needs no
// Kokkos and works in any process.
#pragma once

#include <array>
#include <cstdint>

#include "common/axis.hpp"
#include "io/memory_arrays.hpp"

namespace discount::embed {

// Bytes of disc + out up to which the Python package runs a host call here
// rather than on the engine's thread team. From scripts/bench/python_calls.py
// (docs/python.md, "What a call costs"): on the 2-core VM a team's call was
// no faster than this loop up to about this size when quiet, and with two
// busy loops beside it a team's call of 16 MB took 8-12 ms against 0.7 ms here.
constexpr std::uint64_t kCallingThreadBytes = std::uint64_t{64} << 20;

// out = mult * disc broadcast over dates, disc's axes in the order `axes`
// names. mult and disc float64 or float32, out float64; out may be disc
// itself (in place) and must not otherwise overlap the inputs (the caller
// checks). Returns the seconds the loop took.
double multiply_on_calling_thread(const ArrayRef& mult, const ArrayRef& disc, const ArrayRef& out,
                                  const std::array<Axis, 3>& axes);

}  // namespace discount::embed
