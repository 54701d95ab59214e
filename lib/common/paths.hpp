// Path helpers: text only, but for existing_folder.
#pragma once

#include <string>

namespace discount {

// The folder part of a path: "a/b/c.h5" -> "a/b", "c.h5" -> ".", "/c.h5" -> "/".
std::string dir_of(const std::string& path);

// `folder` itself when it is a directory, else its nearest parent that is
// (what a file created in a missing folder will sit on once it is made).
std::string existing_folder(const std::string& folder);

}  // namespace discount
