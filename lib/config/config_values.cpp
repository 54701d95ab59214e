// The value forms of config keys that are not plain YAML scalars: memory
// sizes (`16GiB`, `80%`, bytes) and speeds (`2.5GB/s`); how a size is
// written back (MemorySize::describe). Pure.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "common/quote.hpp"
#include "common/sizes.hpp"
#include "config/config.hpp"

namespace discount {

std::uint64_t MemorySize::resolve(std::uint64_t available_bytes) const {
  if (!is_percent) return bytes;
  return static_cast<std::uint64_t>(static_cast<double>(available_bytes) * percent / 100.0);
}

std::string MemorySize::describe() const {
  if (is_percent) {
    std::ostringstream out;
    out << percent << "%";
    return out.str();
  }
  return size_text(bytes);
}

namespace {
// std::stod, with a reason a user can act on instead of "stod".
double size_number(const std::string& text, std::size_t* used) {
  try {
    return std::stod(text, used);
  } catch (const std::exception&) {
    throw std::invalid_argument("expected a number such as 16GiB, 512MiB, 1000000 or 80%");
  }
}
}  // namespace

MemorySize parse_memory_size(const std::string& raw) {
  std::string text;
  for (char c : raw)
    if (c != ' ' && c != '_') text += c;
  if (text.empty()) throw std::invalid_argument("empty size");
  MemorySize size;
  if (text.back() == '%') {
    std::size_t used = 0;
    double pct = size_number(text.substr(0, text.size() - 1), &used);
    if (used != text.size() - 1 || !(pct > 0.0) || pct > 100.0)
      throw std::invalid_argument("percentage must be in (0, 100]");
    size.is_percent = true;
    size.percent = pct;
    return size;
  }
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  if (digits == 0) throw std::invalid_argument("expected a number such as 16GiB, 512MiB, 1000000 or 80%");
  double number = size_number(text.substr(0, digits), nullptr);
  std::string suffix = text.substr(digits);
  std::transform(suffix.begin(), suffix.end(), suffix.begin(), [](unsigned char c) { return std::tolower(c); });
  double scale = 0;
  if (suffix.empty() || suffix == "b")
    scale = 1;
  else if (suffix == "k" || suffix == "kib")
    scale = 1024.0;
  else if (suffix == "m" || suffix == "mib")
    scale = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gib")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tib")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (suffix == "kb")
    scale = 1e3;
  else if (suffix == "mb")
    scale = 1e6;
  else if (suffix == "gb")
    scale = 1e9;
  else if (suffix == "tb")
    scale = 1e12;
  else
    throw std::invalid_argument("unknown unit " + quote_for_message(suffix, 40) +
                                " (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB or %)");
  double value = number * scale;
  if (!(value >= 1.0) || value > 1e18) throw std::invalid_argument("size out of range");
  size.is_percent = false;
  size.bytes = static_cast<std::uint64_t>(value);
  return size;
}

double parse_gb_per_s(const std::string& raw) {
  std::string text;
  for (char c : raw)
    if (c != ' ' && c != '_') text += c;
  if (text.empty()) throw std::invalid_argument("empty speed");
  // [+-]digits[.digits][e[+-]digits], then a unit.
  std::size_t end = 0;
  if (end < text.size() && (text[end] == '+' || text[end] == '-')) ++end;
  const std::size_t first_digit = end;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == first_digit) throw std::invalid_argument("expected a speed in GB/s such as 2.5 or 2.5GB/s");
  if (end + 1 < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    std::size_t exp = end + 1;
    if (exp < text.size() && (text[exp] == '+' || text[exp] == '-')) ++exp;
    if (exp < text.size() && std::isdigit(static_cast<unsigned char>(text[exp]))) {
      while (exp < text.size() && std::isdigit(static_cast<unsigned char>(text[exp]))) ++exp;
      end = exp;
    }
  }
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text.substr(0, end), &used);
  } catch (const std::exception&) { throw std::invalid_argument("expected a speed in GB/s such as 2.5 or 2.5GB/s"); }
  if (used != end) throw std::invalid_argument("expected a speed in GB/s such as 2.5 or 2.5GB/s");
  std::string suffix = text.substr(end);
  std::transform(suffix.begin(), suffix.end(), suffix.begin(), [](unsigned char c) { return std::tolower(c); });
  double scale = 0;  // to GB/s
  if (suffix.empty() || suffix == "gb/s")
    scale = 1;
  else if (suffix == "b/s")
    scale = 1e-9;
  else if (suffix == "kb/s")
    scale = 1e-6;
  else if (suffix == "mb/s")
    scale = 1e-3;
  else if (suffix == "tb/s")
    scale = 1e3;
  else if (suffix == "kib/s")
    scale = 1024.0 / 1e9;
  else if (suffix == "mib/s")
    scale = 1024.0 * 1024 / 1e9;
  else if (suffix == "gib/s")
    scale = 1024.0 * 1024 * 1024 / 1e9;
  else if (suffix == "tib/s")
    scale = 1024.0 * 1024 * 1024 * 1024 / 1e9;
  else
    throw std::invalid_argument("unknown unit " + quote_for_message(suffix, 40) +
                                " (use GB/s, MB/s, TB/s, GiB/s, MiB/s or a plain number of GB/s)");
  const double value = number * scale;
  if (!(value > 0.0)) throw std::invalid_argument("must be a positive speed such as 2.5 or 2.5GB/s");
  if (!std::isfinite(value) || value > 1e6) throw std::invalid_argument("speed out of range (at most 1e6 GB/s)");
  return value;
}

}  // namespace discount
