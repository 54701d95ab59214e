// A whole file's bytes as a string, for the tests that check what was written.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace discount::test_support {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace discount::test_support
