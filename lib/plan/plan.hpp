// Turns shapes and budgets into slabs and buffer sizes. Pure: no I/O, no
// Kokkos, so every corner is unit-tested in milliseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace discount {

struct PlanRequest {
  // Extents of the selected region (after input.dates / input.ids).
  std::int64_t dates = 0, ids = 0, nums = 0;
  Axis chunk_axis = Axis::date;
  int pipeline_depth = 3;
  bool device_copies = false;  // kernel in a device memory space: H2D and D2H
  std::uint64_t host_budget = 0;
  std::uint64_t device_budget = 0;
  std::uint64_t max_slab = std::uint64_t{256} << 20;
  std::uint64_t element_bytes = sizeof(double);
};

// Ranges are relative to the selected region.
struct Slab {
  int index = 0;
  Range dates;
  Range ids;
  std::int64_t nums = 0;
  std::int64_t elements() const { return dates.size() * ids.size() * nums; }
};

struct Plan {
  PlanRequest request;
  std::vector<Slab> slabs;
  std::int64_t slab_extent = 0;      // along the chunk axis, all but the last slab
  std::uint64_t slab_bytes = 0;      // discount bytes of the largest slab
  std::uint64_t mult_bytes = 0;      // multBy bytes of the whole selection
  bool mult_per_slab = false;        // chunk_axis id: each slab brings its own multBy rows
  std::uint64_t slab_mult_bytes = 0; // multBy bytes travelling with each slab (id chunks)
  int host_buffers = 0;              // ring of pinned staging buffers
  int device_buffers = 0;            // 0 when the kernel runs in host space
  std::uint64_t host_bytes = 0;      // everything the plan allocates on the host
  std::uint64_t device_bytes = 0;    // everything the plan allocates on the device

  std::uint64_t total_elements() const;
  std::uint64_t input_bytes() const;   // discount + multBy, read once
  std::uint64_t output_bytes() const;  // cv
  std::string describe() const;        // human-readable, for `discount_app plan`
};

// Throws discount::Error (ExitCode::config) when one minimal slab does not fit
// a budget, and (ExitCode::data_invalid) for an empty dimension.
Plan make_plan(const PlanRequest& request);

}  // namespace discount
