// Reading the job's YAML file with a bound: a config is a small regular file,
// so anything else (a directory, /dev/zero, a FIFO, a file over 1 MiB) is
// refused before it is read, and the file is read once, through one
// descriptor, so what was checked is what is parsed.
#pragma once

#include <cstddef>
#include <string>

namespace discount {

constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

// The file's text. A missing or unreadable file: ExitCode::input_missing; not
// a regular file, or larger than kMaxConfigBytes: ExitCode::config.
std::string read_config_file(const std::string& path);

}  // namespace discount
