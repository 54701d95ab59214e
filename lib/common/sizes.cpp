#include "common/sizes.hpp"

#include <cstdio>
#include <cstring>

namespace discount {

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", value);
  // "256.00" -> "256", "1.50" -> "1.5"
  std::size_t len = std::strlen(text);
  while (len > 0 && text[len - 1] == '0') --len;
  if (len > 0 && text[len - 1] == '.') --len;
  return std::string(text, len) + " " + units[unit];
}

std::string size_text(std::uint64_t bytes) {
  struct Unit {
    std::uint64_t scale;
    const char* name;
  };
  static const Unit units[] = {{std::uint64_t{1} << 40, "TiB"},
                               {std::uint64_t{1} << 30, "GiB"},
                               {std::uint64_t{1} << 20, "MiB"},
                               {std::uint64_t{1} << 10, "KiB"},
                               {1000000000000ull, "TB"},
                               {1000000000ull, "GB"},
                               {1000000ull, "MB"},
                               {1000ull, "KB"}};
  const Unit* best = nullptr;
  for (const Unit& u : units)
    if (bytes != 0 && bytes % u.scale == 0 && (!best || bytes / u.scale < bytes / best->scale)) best = &u;
  if (!best) return std::to_string(bytes);
  return std::to_string(bytes / best->scale) + best->name;
}

}  // namespace discount
