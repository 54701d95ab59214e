// A short, stable name for a text: the output's resume fingerprint (the job's
// identity) and the limits cache's file names.
#pragma once

#include <string>

namespace discount {

// 16 hex digits (64-bit FNV-1a of the bytes); the same text always gives the same name.
std::string fingerprint_of(const std::string& text);

}  // namespace discount
