// This host's measured link limits, kept between runs. Measuring h2d, d2h
// and the kernel costs every run a few hundred milliseconds (pinned and
// device buffers, timed copies); a batch of short jobs on one node pays it
// again and again for the same figures. An entry is reused while it is
// younger than `limits.cache_days` and was made by the same build, on the
// same host and GPU, with the same rank layout, host threads and buffer
// size; `run --remeasure` (or deleting the file) measures again.
//
// Where: $DISCOUNT_CACHE_DIR (Knobs::cache_dir, the job's reading, passed
// in), else $XDG_CACHE_HOME/discount_app, else $HOME/.cache/discount_app; one
// small text file per entry. A cache that cannot be read or written is not
// an error: the run measures.
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "common/knobs.hpp"
#include "plan/limits.hpp"

namespace discount {

// The folder: `dir` (Knobs::cache_dir) when not empty, else the fallbacks above.
std::string limits_cache_dir(const std::string& dir);

// The measured links of an entry (unknown links have gb_per_s 0), when the
// entry for `key` exists and is at most `max_days` old. `dir` as
// limits_cache_dir's; left out, the environment is read at the call.
std::optional<Limits> load_cached_limits(const std::string& key, int max_days, std::time_t now,
                                         const std::string& dir = read_knobs().cache_dir);
// Stores the measured links of `limits` under `key` (written to a temporary
// file and renamed, so concurrent ranks never see half an entry).
void store_cached_limits(const std::string& key, const Limits& limits, std::time_t now,
                         const std::string& dir = read_knobs().cache_dir);

}  // namespace discount
