// This host's measured link limits, kept between runs. Measuring h2d, d2h
// and the kernel costs every run a few hundred milliseconds (pinned and
// device buffers, timed copies); a batch of short jobs on one node pays it
// again and again for the same figures. An entry is reused while it is
// younger than `limits.cache_days` and was made by the same build, on the
// same host and GPU, with the same rank layout, host threads and buffer
// size; `run --remeasure` (or deleting the file) measures again.
//
// Where: $DISCOUNT_CACHE_DIR, else $XDG_CACHE_HOME/discount_app, else
// $HOME/.cache/discount_app; one small text file per entry. A cache that
// cannot be read or written is not an error: the run measures.
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "plan/limits.hpp"

namespace discount {

std::string limits_cache_dir();

// The measured links of an entry (unknown links have gb_per_s 0), when the
// entry for `key` exists and is at most `max_days` old.
std::optional<Limits> load_cached_limits(const std::string& key, int max_days, std::time_t now);
// Stores the measured links of `limits` under `key` (written to a temporary
// file and renamed, so concurrent ranks never see half an entry).
void store_cached_limits(const std::string& key, const Limits& limits, std::time_t now);

}  // namespace discount
