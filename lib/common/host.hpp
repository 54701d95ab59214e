// This machine's name, for run records, output locks, reports and cache keys.
#pragma once

#include <string>

namespace discount {

// gethostname(); empty when it fails.
std::string host_name();

}  // namespace discount
