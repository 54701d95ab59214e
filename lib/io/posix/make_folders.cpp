#include "io/posix/make_folders.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace discount {

std::string make_folders(const std::string& dir) {
  if (dir.empty()) return {};
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0)
    return S_ISDIR(st.st_mode) ? std::string() : "'" + dir + "' exists and is not a folder";
  // Parents first, then this one; a folder another process made in between is fine.
  const auto slash = dir.find_last_of('/', dir.size() > 1 ? dir.size() - 2 : 0);
  if (slash != std::string::npos && slash > 0) {
    const std::string why = make_folders(dir.substr(0, slash));
    if (!why.empty()) return why;
  }
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) return "'" + dir + "': " + std::strerror(errno);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "'" + dir + "' exists and is not a folder";
  return {};
}

}  // namespace discount
