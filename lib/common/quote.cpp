#include "common/quote.hpp"

#include <cstdint>
#include <cstdio>

namespace discount {

namespace {

// Length of the valid UTF-8 sequence at text[pos] and its code point, or 0
// when the bytes there are not one (stray continuation byte, overlong form,
// surrogate, beyond U+10FFFF, cut short).
std::size_t utf8_sequence(std::string_view text, std::size_t pos, std::uint32_t& code) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  std::size_t length = 0;
  std::uint32_t min = 0;
  if (lead < 0x80) {
    code = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, code = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(pos + i) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// Code points printed as \uNNNN: C1 controls, the line and paragraph
// separators, and the bidirectional overrides that can make a terminal show
// text in another order than it is stored.
bool escaped_code_point(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9F) || code == 0x2028 || code == 0x2029 || (code >= 0x202A && code <= 0x202E) ||
         (code >= 0x2066 && code <= 0x2069) || code == 0xFEFF;
}

// The printable form and whether it was cut.
std::string printable(std::string_view text, std::size_t max_chars, bool& cut) {
  std::string out;
  std::size_t shown = 0;  // printed characters so far
  cut = false;
  char escape[16];
  for (std::size_t pos = 0; pos < text.size();) {
    std::uint32_t code = 0;
    const std::size_t length = utf8_sequence(text, pos, code);
    std::string_view piece;
    std::size_t width = 1;
    if (length == 0 || code < 0x20 || code == 0x7F) {
      const unsigned char b = static_cast<unsigned char>(text[pos]);
      if (b == '\n')
        std::snprintf(escape, sizeof escape, "\\n");
      else if (b == '\t')
        std::snprintf(escape, sizeof escape, "\\t");
      else if (b == '\r')
        std::snprintf(escape, sizeof escape, "\\r");
      else
        std::snprintf(escape, sizeof escape, "\\x%02X", b);
      piece = escape;
      width = piece.size();
      pos += 1;
    } else if (escaped_code_point(code)) {
      std::snprintf(escape, sizeof escape, "\\u%04X", static_cast<unsigned>(code));
      piece = escape;
      width = piece.size();
      pos += length;
    } else {
      piece = text.substr(pos, length);
      pos += length;
    }
    if (shown + width > max_chars) {
      cut = true;
      out += "...";
      return out;
    }
    out.append(piece.data(), piece.size());
    shown += width;
  }
  return out;
}

}  // namespace

std::string printable_for_message(std::string_view text, std::size_t max_chars) {
  bool cut = false;
  return printable(text, max_chars, cut);
}

std::string quote_for_message(std::string_view text, std::size_t max_chars) {
  bool cut = false;
  std::string out = "'" + printable(text, max_chars, cut) + "'";
  if (cut) out += " (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace discount
