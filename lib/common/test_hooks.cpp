#include "common/test_hooks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <utility>

namespace discount {

namespace {
bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}
}  // namespace

TestHold::TestHold(std::string dir) : dir_(std::move(dir)) {}

void TestHold::hold(const std::string& name, const std::function<bool()>& stopping) const {
  const std::string gate = dir_ + "/hold-" + name;
  if (!exists(gate)) return;
  const int fd = ::open((dir_ + "/held-" + name).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
  const struct timespec step { 0, 2'000'000 };
  while (exists(gate) && !stopping()) ::nanosleep(&step, nullptr);
}

}  // namespace discount
