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

// "an HDF5" or "a netCDF" when the file starts as a data file does: HDF5's
// signature at 0, 512, 1024, ... (after a user block), netCDF classic's "CDF".
const char* data_file_kind(int fd, std::uint64_t size) {
  static const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8] = {};
  for (std::uint64_t at = 0; at + 8 <= size && at <= (std::uint64_t{1} << 20); at = at ? at * 2 : 512) {
    if (::pread(fd, head, 8, static_cast<off_t>(at)) != 8) break;
    if (std::memcmp(head, hdf5, 8) == 0) return "an HDF5";
    if (at == 0 && head[0] == 'C' && head[1] == 'D' && head[2] == 'F' && (head[3] == 1 || head[3] == 2 || head[3] == 5))
      return "a netCDF";
  }
  return nullptr;
}

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

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
  if (S_ISREG(st.st_mode))
    if (const char* kind = data_file_kind(fd.get(), static_cast<std::uint64_t>(st.st_size)))
      throw config_error(
          name + ": is " + kind + " data file, not a job; a job is a YAML file that names it, such as " +
          "the two lines 'input: {file: " + printable_for_message(base_of(path)) +
          "}' and 'output: {file: cv.h5}' saved as job.yaml beside it; then run 'discount_app job.yaml'");
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
