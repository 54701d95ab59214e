#include "common/host.hpp"

#include <unistd.h>

namespace discount {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

}  // namespace discount
