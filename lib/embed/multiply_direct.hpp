// multiply() in host space on arrays the kernel can read as they are: one
// pass over the data. The pipeline's host path would copy each slab into a
// staging buffer, run the kernel there and copy the result out (three passes
// through memory); here the kernel reads `disc` and writes `out` directly,
// in slabs along the outermost axis, with the same progress, stop, test
// hold and Kokkos Tools region as the pipeline. Arrays it cannot take
// (float32, strided, partly overlapping) and slabs that are not contiguous
// (a chunk_axis other than the arrays' outermost, or num outermost) keep
// the pipeline.
#pragma once

#include <atomic>
#include <vector>

#include "embed/embed.hpp"
#include "plan/plan.hpp"
#include "resolve/resolve.hpp"

namespace discount::embed {

// Whether request can run on the arrays directly under `plan` (host arrays,
// a kernel in host memory, float64 C-contiguous arrays, out either disc
// itself or apart from it, slabs cut along the outermost axis).
bool direct_applies(const MultiplyRequest& request, const Plan& plan);

// The slabs it runs, along the outermost axis (date or id): about 4 GiB of
// disc, or under a host_budget as much as half the budget holds (disc + out).
std::vector<Slab> direct_slabs(const MultiplyRequest& request, const Plan& plan);

// Runs plan's slabs in order on the arrays; fills report's stages, slab
// counts and `interrupted` (a stop ends it after the current slab).
void multiply_direct(const MultiplyRequest& request, const JobSpec& spec, const Plan& plan, RunReport& report,
                     const std::atomic<int>* stop, const Progress& progress);

}  // namespace discount::embed
