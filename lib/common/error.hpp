// Typed errors carrying a sysexits-style exit code: main() turns each into one
// stderr line and the documented exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace discount {

enum class ExitCode : int {
  ok = 0,
  usage = 64,          // command-line usage error
  data_invalid = 65,   // wrong rank, shapes, dtype, NaN/Inf
  input_missing = 66,  // config, input file or dataset not found, not HDF5
  internal = 70,       // a bug
  cannot_create = 73,  // output exists, directory missing or read-only
  io_error = 74,       // disk full, file size limit, write failure
  interrupted = 75,    // signal; progress saved
  config = 78,         // YAML syntax, unknown key, wrong type/value, budget
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

inline Error usage_error(const std::string& m) { return {ExitCode::usage, m}; }
inline Error data_error(const std::string& m) { return {ExitCode::data_invalid, m}; }
inline Error missing_error(const std::string& m) { return {ExitCode::input_missing, m}; }
inline Error internal_error(const std::string& m) { return {ExitCode::internal, m}; }
inline Error create_error(const std::string& m) { return {ExitCode::cannot_create, m}; }
inline Error io_error(const std::string& m) { return {ExitCode::io_error, m}; }
inline Error config_error(const std::string& m) { return {ExitCode::config, m}; }

// The table printed by --help and reproduced in docs/errors.md.
const char* exit_code_table();

}  // namespace discount
