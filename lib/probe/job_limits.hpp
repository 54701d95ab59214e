// The job's link limits, as the run and plan take them: configured links
// win; the others come from this host's cache (probe/limits_cache.hpp) or are
// measured now (probe/links.hpp), every rank at once under MPI, and added up
// over the ranks. Collective under MPI; call after Kokkos::initialize.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/limits.hpp"
#include "plan/plan.hpp"

namespace discount {

// The run's measuring buffers: within a quarter of the budgets, at most
// 256 MiB; 0 below 32 MiB, where a measurement would time caches, not links
// (the links then stay unknown).
std::uint64_t run_measuring_bytes(const Plan& plan);

// What makes a cached measurement this rank's: the host, the build
// (`build_text`: version_text(), its MPI line left out), the GPU, the rank
// layout, the host threads and the measuring buffers' size.
std::string limits_cache_key(const Plan& plan, std::uint64_t cap, const std::string& build_text);

// The job's limits from a cache entry: configured links win, the others are
// taken from the entry. Empty when the entry lacks a link the job measures.
std::optional<Limits> from_cache(const std::optional<Limits>& cached, const LimitsConfig& config, bool device_copies);

// Under MPI every rank measures its own links at the same moment and the
// rates are added up: the whole job's ceiling under the same sharing of PCIe,
// host memory and GPUs as the run, to compare with the report's stage rates
// (every rank's bytes over the slowest rank's seconds). One rank measuring
// alone would overstate the shared links (docs/performance.md has the
// figures). Configured limits are taken as the whole job's. Collective; the
// same on every rank.
void add_up_ranks(Limits& limits);

// The run's limits: each rank's measurement is cached; the job measures
// unless every rank has a valid entry. `remeasure`: ignore the cache (and
// refresh it). `cache_dir`: Knobs::cache_dir (probe/limits_cache.hpp).
Limits job_limits(const LimitsConfig& config, const Plan& plan, bool remeasure, const std::string& build_text,
                  const std::string& cache_dir);

// For plan: fills the links `limits` still lacks (kernel, and h2d/d2h for a
// device kernel) as the run measures them, with buffers of at least 64 MiB
// (plan allocates no slabs, so a small budget need not leave the links
// unknown); they read "measured now". Returns the seconds the run itself
// would spend on it (0 when the run measures nothing: buffers under 32 MiB,
// or this host's cache, in `cache_dir` as job_limits's, holds them).
double measure_links_for_plan(const LimitsConfig& config, const Plan& plan, const std::string& build_text,
                              const std::string& cache_dir, Limits& limits);

// A link measured by this process just now (plan's wording).
LinkLimit measured_now(double gb_per_s);

// The limits line: Limits::describe(), and under MPI how the ranks' links were added up.
std::string limits_text(const Limits& limits);

}  // namespace discount
