// Source names in an HDF5 virtual dataset's mapping. HDF5 reads `%b` in a
// source file or dataset name as the block number of a printf-style mapping
// and `%%` as one `%`, so every name the app writes into a mapping goes
// through vds_escape, and every name read back from one (ours or another
// tool's) through vds_unescape. No other character is special there.
#pragma once

#include <string>
#include <string_view>

namespace discount {

inline std::string vds_escape(std::string_view name) {
  std::string text;
  text.reserve(name.size());
  for (const char c : name) {
    text += c;
    if (c == '%') text += '%';
  }
  return text;
}

// `%%` -> `%`; anything else (a `%b` of a printf-style mapping included) is kept.
inline std::string vds_unescape(std::string_view name) {
  std::string text;
  text.reserve(name.size());
  for (std::size_t j = 0; j < name.size(); ++j) {
    text += name[j];
    if (name[j] == '%' && j + 1 < name.size() && name[j + 1] == '%') ++j;
  }
  return text;
}

}  // namespace discount
