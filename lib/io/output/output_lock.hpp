// One job per output: an flock()ed lock file beside it (docs/architecture.md).
#pragma once

#include <string>

#include "io/posix/posix_io.hpp"

namespace discount {

// A lock file held through a flock()ed descriptor; on destruction the file
// is unlinked while still locked, then the descriptor closes.
struct HeldLock {
  UniqueFd fd;
  std::string path;
  HeldLock() = default;
  HeldLock(HeldLock&&) = default;
  HeldLock& operator=(HeldLock&&) = default;
  ~HeldLock();
};

// Takes `lock_path` for this process, or throws ExitCode::cannot_create
// naming the holder and `what` (the file the lock guards).
HeldLock take_output_lock(const std::string& lock_path, const std::string& what);

}  // namespace discount
