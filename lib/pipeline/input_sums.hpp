// Checksums of the input bytes each slab is computed from (io/checksum.hpp),
// taken by the reader on the staging buffers as read, and the same sums read
// again for any range of units, for a resume whose input file is another
// file or was changed since (io/output/output_resume.cpp compares them).
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "io/input/input.hpp"
#include "io/records/output_spec.hpp"
#include "plan/plan.hpp"
#include "resolve/resolve.hpp"

namespace discount {

// The discount box [dates x ids x all nums] packed in the file's axis order,
// at its absolute indices in the source.
std::uint64_t discount_sum(const double* buffer, const InputShape& shape, const std::array<Axis, 3>& axes, Range dates,
                           Range ids);
// multBy rows `ids` (absolute), packed.
std::uint64_t multiplier_sum(const double* rows, Range ids, std::int64_t nums);

// Reads the input of units [begin, end) of the chunk axis (relative to the
// selection) in pieces of at most the plan's slab, and returns its sums:
// what the reader would have taken for a slab of exactly those units.
std::function<InputSums(std::int64_t, std::int64_t)> input_sums_reader(InputSource& input, const PipelineSpec& spec,
                                                                       const Plan& plan);

}  // namespace discount
