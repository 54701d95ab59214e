// The stages a slab goes through and the bytes each one counts: the one
// definition that the plan's prediction, the pipeline's counters, the link
// limits and the report share. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace discount {

enum class Stage : int { read = 0, h2d, kernel, d2h, write };
constexpr int kStageCount = 5;
constexpr std::array<Stage, kStageCount> kAllStages{Stage::read, Stage::h2d, Stage::kernel, Stage::d2h, Stage::write};

// "read", "h2d", "kernel", "d2h", "write": the names in reports and `limits:`.
inline const char* stage_name(Stage stage) {
  static const char* const names[kStageCount] = {"read", "h2d", "kernel", "d2h", "write"};
  return names[static_cast<int>(stage)];
}
// For people: "read", "H2D", "kernel", "D2H", "write".
inline const char* stage_label(Stage stage) {
  static const char* const labels[kStageCount] = {"read", "H2D", "kernel", "D2H", "write"};
  return labels[static_cast<int>(stage)];
}
// The stage called `name`; false for any other name.
inline bool stage_named(const std::string& name, Stage& stage) {
  for (Stage s : kAllStages)
    if (name == stage_name(s)) {
      stage = s;
      return true;
    }
  return false;
}

// The stages of a run in pipeline order: the copies only when the kernel runs
// in a memory space the host cannot read.
inline std::vector<Stage> pipeline_stages(bool device_copies) {
  if (device_copies) return {kAllStages.begin(), kAllStages.end()};
  return {Stage::read, Stage::kernel, Stage::write};
}

// What one slab moves: its discount values, the multBy values of its rows
// (ids x nums), and whether those rows travel with it (chunk axis id) or
// stay resident (chunk axis date).
struct SlabTraffic {
  std::uint64_t elements = 0;
  std::uint64_t mult_elements = 0;
  bool mult_per_slab = false;
  std::uint64_t element_bytes = sizeof(double);
  // As stored on disk: the read stage counts the inputs' bytes (a float32
  // input reads half a float64 one's), the write stage the output's.
  std::uint64_t input_bytes = sizeof(double), mult_input_bytes = sizeof(double), output_bytes = sizeof(double);
};

// Bytes `stage` counts for one slab:
//   read   discount, plus its multBy rows when they travel with the slab, as stored
//   h2d    the same in float64
//   kernel discount read + cv written + the multBy rows it reads
//   d2h    cv
//   write  cv as stored (output.dtype)
inline std::uint64_t stage_bytes(Stage stage, const SlabTraffic& slab) {
  const std::uint64_t data = slab.elements * slab.element_bytes;
  const std::uint64_t rows = slab.mult_elements * slab.element_bytes;
  switch (stage) {
    case Stage::read:
      return slab.elements * slab.input_bytes + (slab.mult_per_slab ? slab.mult_elements * slab.mult_input_bytes : 0);
    case Stage::h2d: return data + (slab.mult_per_slab ? rows : 0);
    case Stage::kernel: return 2 * data + rows;
    case Stage::d2h: return data;
    case Stage::write: return slab.elements * slab.output_bytes;
  }
  return 0;
}

// Bytes `stage` counts once per process, whatever its share of the slabs: the
// resident multBy's read (its one upload is not counted).
inline std::uint64_t resident_stage_bytes(Stage stage, std::uint64_t mult_bytes, bool mult_per_slab) {
  return stage == Stage::read && !mult_per_slab ? mult_bytes : 0;
}

}  // namespace discount
