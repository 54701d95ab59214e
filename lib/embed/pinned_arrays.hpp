// Host arrays page-locked where they lie, so that a GPU copies pieces of them
// directly (InputSource::discount_in_place, SlabPieces::in_place) instead of
// through pinned staging. Arrays in pageable memory cost a host copy each
// way: on the H200 node the two copies alone took 0.67 s for 20 GB in and 20
// GB out, where PCIe allows 0.40 s. Pinning 20 GB in place took 0.55 s
// (36 GB/s, not faster on more threads), so it pays from the second call
// that sees an array; the Python module decides which arrays, and undoes it
// when an array is freed (docs/python.md, "Arrays pinned in place").
#pragma once

#include <cstddef>
#include <cstdint>

namespace discount::embed {

// Page-locks [data, data + bytes); true when that range is pinned (now, or
// by an earlier call). False when the runtime refuses or there is no GPU:
// the arrays then go through staging as before.
bool pin_array(void* data, std::size_t bytes);
// Undoes pin_array(data, ...) from any thread; returns the bytes unpinned (0
// for a range not pinned).
std::uint64_t unpin_array(void* data);
// Undoes every pin (release_buffers, and before Kokkos ends); returns bytes.
std::uint64_t unpin_all_arrays();
std::uint64_t pinned_array_bytes();
// True when [data, data + bytes) lies inside one pinned range.
bool array_is_pinned(const void* data, std::size_t bytes);

}  // namespace discount::embed
