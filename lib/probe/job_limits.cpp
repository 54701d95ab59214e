#include "probe/job_limits.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <sstream>
#include <vector>

#include "config/config.hpp"
#include "backend/system_memory.hpp"
#include "probe/limits_cache.hpp"
#include "probe/links.hpp"
#include "ranks/ranks.hpp"

namespace discount {

std::uint64_t run_measuring_bytes(const Plan& plan) {
  std::uint64_t cap = plan.request.host_budget / 4;
  if (plan.request.device_copies) cap = std::min(cap, plan.request.device_budget / 4);
  return cap < (std::uint64_t{32} << 20) ? 0 : std::min<std::uint64_t>(cap, std::uint64_t{256} << 20);
}

std::string limits_cache_key(const Plan& plan, std::uint64_t cap, const std::string& build_text) {
  std::string key = "host " + host_name() + "\n";
  std::istringstream versions(build_text);
  for (std::string line; std::getline(versions, line);)
    if (line.rfind("MPI build", 0) != 0) key += "build " + line + "\n";
  key += std::string("space ") + (plan.request.device_copies ? "device copies" : "host") + "\n";
  if (plan.request.device_copies) key += "gpu " + device_name() + "\n";
  key += "ranks " + std::to_string(ranks::size()) + ", this node " + std::to_string(ranks::local_size()) +
         ", local rank " + std::to_string(ranks::local_rank()) + "\n";
  key += "host threads " + std::to_string(Kokkos::DefaultHostExecutionSpace().concurrency()) + "\n";
  key += "buffer bytes " + std::to_string(cap) + "\n";
  return key;
}

std::optional<Limits> from_cache(const std::optional<Limits>& cached, const LimitsConfig& config, bool device_copies) {
  if (!cached) return std::nullopt;
  Limits limits = configured_limits(config);
  const Stage wanted[] = {Stage::kernel, Stage::h2d, Stage::d2h};
  for (Stage stage : wanted) {
    if (!device_copies && stage != Stage::kernel) break;
    if (limits.of(stage).known()) continue;
    if (!cached->of(stage).known()) return std::nullopt;
    limits.of(stage) = cached->of(stage);
  }
  return limits;
}

void add_up_ranks(Limits& limits) {
  for (LinkLimit* link : {&limits.h2d, &limits.d2h, &limits.kernel}) {
    const bool measured = link->source == LinkSource::measured;
    std::vector<double> rate{measured ? link->gb_per_s : 0.0};
    ranks::sum(rate);
    const bool everywhere = ranks::min(std::uint64_t{measured}) == 1;
    if (measured) {
      if (everywhere)
        link->gb_per_s = rate[0];
      else
        *link = LinkLimit{};
    }
  }
}

Limits job_limits(const LimitsConfig& config, const Plan& plan, bool remeasure, const std::string& build_text,
                  const std::string& cache_dir) {
  const std::uint64_t cap = run_measuring_bytes(plan);
  if (cap == 0 || !config.measure) return configured_limits(config);
  const std::string key = limits_cache_key(plan, cap, build_text);
  const std::time_t now = std::time(nullptr);
  std::optional<Limits> limits;
  if (!remeasure)
    limits = from_cache(load_cached_limits(key, config.cache_days, now, cache_dir), config, plan.request.device_copies);
  if (ranks::min(std::uint64_t{limits.has_value()}) == 0) {
    ranks::barrier();
    limits = measure_limits(config, plan.request.device_copies, cap);
    if (config.cache_days > 0) store_cached_limits(key, *limits, now, cache_dir);
  }
  if (ranks::multi()) add_up_ranks(*limits);
  return *limits;
}

double measure_links_for_plan(const LimitsConfig& config, const Plan& plan, const std::string& build_text,
                              const std::string& cache_dir, Limits& limits) {
  using Clock = std::chrono::steady_clock;
  const std::uint64_t run_cap = run_measuring_bytes(plan);
  bool run_measures = run_cap > 0;
  const std::uint64_t cap = std::max<std::uint64_t>(run_cap, std::uint64_t{64} << 20);
  // A run that finds this host's cached limits (job_limits) spends nothing on them.
  if (run_measures && config.measure &&
      from_cache(load_cached_limits(limits_cache_key(plan, run_cap, build_text), config.cache_days, std::time(nullptr),
                                    cache_dir),
                 config, plan.request.device_copies))
    run_measures = false;
  ranks::barrier();
  const auto t0 = Clock::now();
  Limits measured = measure_limits(config, plan.request.device_copies, cap);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (ranks::multi()) add_up_ranks(measured);
  for (auto link : {&Limits::h2d, &Limits::kernel, &Limits::d2h})
    if (!(limits.*link).known() && (measured.*link).known()) limits.*link = measured_now((measured.*link).gb_per_s);
  return run_measures ? seconds : 0.0;
}

LinkLimit measured_now(double gb_per_s) {
  LinkLimit link{gb_per_s, LinkSource::measured};
  link.note = "measured now";
  return link;
}

std::string limits_text(const Limits& limits) {
  std::string text = limits.describe();
  if (ranks::multi())
    text += "; h2d, d2h and kernel: " + std::to_string(ranks::size()) + " ranks measuring at once, added up";
  return text;
}

}  // namespace discount
