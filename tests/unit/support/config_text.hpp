// Configs parsed from text for the config tests: the parse, the error it
// throws as (code, message), and the smallest valid config.
#pragma once

#include <string>
#include <utility>

#include "common/error.hpp"
#include "config/config.hpp"

namespace discount::test_support {

inline Config parse(const std::string& text) { return parse_config(text, "job.yaml"); }

// The error a config produces, as (code, message).
inline std::pair<ExitCode, std::string> error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) { return {e.code(), e.what()}; }
  return {ExitCode::ok, ""};
}

inline const char* const kMinimal = "input: {file: in.h5}\noutput: {file: out.h5}\n";

}  // namespace discount::test_support
