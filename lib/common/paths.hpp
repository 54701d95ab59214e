// Path text helpers (no file-system access).
#pragma once

#include <string>

namespace discount {

// The folder part of a path: "a/b/c.h5" -> "a/b", "c.h5" -> ".", "/c.h5" -> "/".
std::string dir_of(const std::string& path);

}  // namespace discount
