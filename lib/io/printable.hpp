// Bytes from a file the user controls (a lock file's holder text), made safe
// for a one-line message: printable ASCII kept, \n \t \r and every other
// byte escaped (\xNN), at most `max_chars` characters, "..." marking a cut.
// (A general quoting helper may replace this one.)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace discount {

inline std::string printable_excerpt(std::string_view bytes, std::size_t max_chars = 100) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    std::string piece;
    if (byte >= 0x20 && byte < 0x7f) piece = std::string(1, c);
    else if (c == '\n') piece = "\\n";
    else if (c == '\t') piece = "\\t";
    else if (c == '\r') piece = "\\r";
    else piece = std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
    if (out.size() + piece.size() > max_chars) return out + "...";
    out += piece;
  }
  return out;
}

}  // namespace discount
