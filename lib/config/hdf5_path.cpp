#include "config/hdf5_path.hpp"

namespace discount {

std::string output_dataset_problem(const std::string& path) {
  const auto start = path.find_first_not_of('/');
  if (start == std::string::npos) return "names the file's root group, not a dataset; give a name such as cv";
  if (path.back() == '/') return "ends with '/', which names a group; give the dataset's name after it (results/cv)";
  if (path.find('\0') != std::string::npos) return "holds a NUL byte";
  std::string first;
  for (std::size_t begin = start; begin <= path.size();) {
    auto end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(begin, end - begin);
    if (part.empty()) return "has an empty part ('//')";
    if (part == ".") return "has a '.' part; name each group (results/cv)";
    if (first.empty()) first = part;
    begin = end + 1;
  }
  if (first == kProgressGroup)
    return std::string("is inside the group '") + kProgressGroup +
           "', which holds the job's progress record; choose another path";
  return "";
}

}  // namespace discount
