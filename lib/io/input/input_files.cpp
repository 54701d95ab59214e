#include "io/input/input_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "common/paths.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/vds_names.hpp"

namespace discount {

std::string beside(const std::string& h5_file, const std::string& name) {
  return name.empty() || name[0] == '/' ? name : dir_of(h5_file) + "/" + name;
}

std::string sampled_content(const std::string& path, std::uint64_t size) {
  constexpr std::uint64_t kBlock = 64 * 1024;
  constexpr int kBetween = 16;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw missing_error("input.file '" + path + "': " + std::strerror(errno));
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a, 64 bits
  std::vector<unsigned char> block(kBlock);
  std::vector<std::uint64_t> offsets{0};
  for (int j = 1; j <= kBetween; ++j) offsets.push_back(size / (kBetween + 1) * j);
  offsets.push_back(size > kBlock ? size - kBlock : 0);
  for (const std::uint64_t offset : offsets) {
    const ssize_t got = ::pread(fd, block.data(), kBlock, static_cast<off_t>(offset));
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      throw io_error("input.file '" + path + "': reading it failed: " + std::strerror(error));
    }
    for (ssize_t b = 0; b < got; ++b) hash = (hash ^ block[static_cast<std::size_t>(b)]) * 1099511628211ull;
  }
  ::close(fd);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// A virtual dataset reads fill values where a source file is missing:
// refuse that instead of computing with them.
void check_virtual_sources(hid_t dcpl, const std::string& file, const std::string& where) {
  std::size_t count = 0;
  h5::check(H5Pget_virtual_count(dcpl, &count), "H5Pget_virtual_count");
  for (std::size_t i = 0; i < count; ++i) {
    const ssize_t length = H5Pget_virtual_filename(dcpl, i, nullptr, 0);
    if (length < 0) throw data_error(where + ": cannot read the source of virtual mapping " + std::to_string(i));
    std::vector<char> text(static_cast<std::size_t>(length) + 1, '\0');
    H5Pget_virtual_filename(dcpl, i, text.data(), text.size());
    const std::string source = vds_unescape(text.data());
    if (source == ".") continue;  // this same file
    struct stat st {};
    if (::stat(beside(file, source).c_str(), &st) != 0 && ::stat(source.c_str(), &st) != 0)
      throw missing_error(where + " is virtual and its source file '" + source +
                          "' is missing (HDF5 would read fill values in its place)");
  }
}

// External raw storage: every byte the dataset needs must exist in its
// files (HDF5 reads zeros past a file's end).
void check_external_files(hid_t dcpl, int count, std::uint64_t bytes, const std::string& file,
                          const std::string& where) {
  std::uint64_t left = bytes;
  for (int i = 0; i < count && left > 0; ++i) {
    char name[4096] = {};
    off_t offset = 0;
    hsize_t size = 0;
    if (H5Pget_external(dcpl, static_cast<unsigned>(i), sizeof name, name, &offset, &size) < 0)
      throw data_error(where + ": cannot read its external storage list");
    const std::uint64_t take = size == H5F_UNLIMITED ? left : std::min<std::uint64_t>(left, size);
    const std::string path = beside(file, name);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw missing_error(where + " keeps its data in the external file '" + path + "': " + std::strerror(errno));
    const std::uint64_t needed = static_cast<std::uint64_t>(offset) + take;
    if (static_cast<std::uint64_t>(st.st_size) < needed)
      throw data_error(where + " keeps its data in the external file '" + path + "', which has " +
                       std::to_string(st.st_size) + " bytes where " + std::to_string(needed) + " are needed");
    left -= take;
  }
  if (left > 0) throw data_error(where + ": its external storage holds fewer bytes than the dataset");
}

}  // namespace discount
