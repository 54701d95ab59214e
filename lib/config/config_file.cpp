#include "config/config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/quote.hpp"
#include "common/sizes.hpp"

namespace discount {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_config_file(const std::string& path) {
  const std::string name = printable_for_message(path);
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of
  // waiting for one; it changes nothing for a regular file.
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    throw missing_error(name + ": cannot open config file: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int err = errno;
    throw missing_error(name + ": cannot read config file: " + std::strerror(err));
  }
  const std::string limit = format_bytes(kMaxConfigBytes);
  if (!S_ISREG(st.st_mode))
    throw config_error(name + ": is " + kind_of(st.st_mode) + "; the config must be a regular YAML file of at most " +
                       limit);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes)
    throw config_error(name + ": is " + std::to_string(st.st_size) + " bytes; a config file may be at most " + limit);
  // One byte more than the bound, so a file that grew since fstat is caught.
  std::string text(kMaxConfigBytes + 1, '\0');
  std::size_t used = 0;
  while (used < text.size()) {
    const ssize_t got = ::read(fd.get(), &text[used], text.size() - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      throw missing_error(name + ": cannot read config file: " + std::strerror(err));
    }
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  if (used > kMaxConfigBytes)
    throw config_error(name + ": grew past " + limit + " while being read; a config file may be at most " + limit);
  text.resize(used);
  return text;
}

}  // namespace discount
