// The hash that names a job's identity (and a limits-cache entry). Pure.
#pragma once

#include <string>

namespace discount {

// FNV-1a 64-bit of the text, as 16 hex digits.
std::string fingerprint_of(const std::string& text);

}  // namespace discount
