// Byte counts as people read them. Every size shown to a user (plan, report,
// errors) goes through format_bytes; the effective config writes sizes with
// size_text, a form parse_memory_size (config/config.hpp) reads back exactly.
#pragma once

#include <cstdint>
#include <string>

namespace discount {

// Binary units, at most two decimals, trailing zeros dropped:
// "512 B", "256 MiB", "1.5 GiB", "3.27 TiB".
std::string format_bytes(std::uint64_t bytes);

// The exact count in the largest unit that divides it (binary first, then
// decimal): "256MiB", "2GB", "1000001". Written in config files as the docs write them.
std::string size_text(std::uint64_t bytes);

}  // namespace discount
