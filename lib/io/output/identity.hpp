// What a job's result is made of, as `key: value` lines (resolve builds them),
// and how two such texts differ: a refused resume names what changed.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace discount {

// "input: was A, now B; memory.chunk_axis: was date, now id", for each key
// whose value differs or that only one side has; empty when none does.
inline std::string identity_change(const std::string& before, const std::string& now) {
  const auto lines = [](const std::string& text) {
    std::map<std::string, std::string> fields;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      const auto colon = line.find(": ");
      if (colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 2);
    }
    return fields;
  };
  const auto a = lines(before), b = lines(now);
  std::string change;
  const auto add = [&](const std::string& key, const std::string& was, const std::string& is) {
    change += (change.empty() ? "" : "; ") + key + ": was " + (was.empty() ? "(none)" : was) + ", now " +
              (is.empty() ? "(none)" : is);
  };
  for (const auto& [key, value] : a) {
    const auto other = b.find(key);
    if (other == b.end())
      add(key, value, "");
    else if (other->second != value)
      add(key, value, other->second);
  }
  for (const auto& [key, value] : b)
    if (a.find(key) == a.end()) add(key, "", value);
  return change;
}

// The same identity with input.nonfinite's other value: a partial written
// under the other setting is resumed where its done ranges hold finite values
// (io/output/output_finished.cpp), since finite inputs give the same result either way.
inline std::string identity_with_other_nonfinite(const std::string& identity) {
  static const std::string error = "input.nonfinite: error\n", propagate = "input.nonfinite: propagate\n";
  std::string text = identity;
  if (const auto at = text.find(error); at != std::string::npos) return text.replace(at, error.size(), propagate);
  if (const auto at = text.find(propagate); at != std::string::npos) return text.replace(at, propagate.size(), error);
  return {};
}

}  // namespace discount
