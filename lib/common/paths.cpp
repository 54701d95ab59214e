#include "common/paths.hpp"

#include <sys/stat.h>

namespace discount {

std::string existing_folder(const std::string& folder) {
  std::string at = folder;
  for (;;) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return at;
    const std::string up = dir_of(at);
    if (up == at) return at;
    at = up;
  }
}

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace discount
