#include "io/posix/part_record.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "common/error.hpp"
#include "common/paths.hpp"

namespace discount {

namespace {

constexpr const char* kHeader = "discount_app part set 1";
constexpr std::size_t kMaxRecordBytes = 16u << 20;

bool plain(unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; }

std::string encode(const std::string& name) {
  std::string text;
  char hex[4];
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (plain(c)) {
      text += ch;
    } else {
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      text += hex;
    }
  }
  return text;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<std::string> decode(const std::string& text) {
  std::string name;
  for (std::size_t j = 0; j < text.size(); ++j) {
    if (text[j] != '%') {
      if (!plain(static_cast<unsigned char>(text[j]))) return std::nullopt;
      name += text[j];
      continue;
    }
    if (j + 2 >= text.size() || hex_value(text[j + 1]) < 0 || hex_value(text[j + 2]) < 0) return std::nullopt;
    name += static_cast<char>(hex_value(text[j + 1]) * 16 + hex_value(text[j + 2]));
    j += 2;
  }
  return name;
}

// A name that stays inside the folder: no '/', not "", "." or "..".
bool inside_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

void fsync_fd_dir(int dir_fd) { ::fsync(dir_fd); }

}  // namespace

std::string part_record_text(const PartRecord& record) {
  std::string text = std::string(kHeader) + "\n";
  text += "output " + encode(record.output) + "\n";
  text += "folder " + encode(record.folder) + "\n";
  for (const auto& part : record.parts) text += "part " + encode(part) + "\n";
  text += "end " + std::to_string(record.parts.size()) + "\n";
  return text;
}

std::optional<PartRecord> parse_part_record(const std::string& text, std::string& damage) {
  std::istringstream in(text);
  std::string line;
  PartRecord record;
  bool have_output = false, have_folder = false, ended = false;
  if (!std::getline(in, line) || line != kHeader) {
    damage = "its first line is not '" + std::string(kHeader) + "'";
    return std::nullopt;
  }
  while (std::getline(in, line)) {
    if (ended) {
      damage = "it goes on after its end line";
      return std::nullopt;
    }
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "end") {
      if (value != std::to_string(record.parts.size())) {
        damage = "its end line does not count its " + std::to_string(record.parts.size()) + " part line(s)";
        return std::nullopt;
      }
      ended = true;
      continue;
    }
    const auto name = decode(value);
    if (!name || !inside_name(*name) || (key != "output" && key != "folder" && key != "part")) {
      damage = "it has a line that is not a record line";
      return std::nullopt;
    }
    if (key == "output")
      record.output = *name, have_output = true;
    else if (key == "folder")
      record.folder = *name, have_folder = true;
    else
      record.parts.push_back(*name);
  }
  if (!ended || !have_output || !have_folder) {
    damage = "it is incomplete";
    return std::nullopt;
  }
  return record;
}

void write_part_record(const std::string& folder, const PartRecord& record) {
  const std::string path = folder + "/" + kPartRecordName;
  const std::string text = part_record_text(record);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw create_error("cannot write the part record '" + path + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw create_error("cannot write the part record '" + path + "': " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!synced) throw create_error("cannot write the part record '" + path + "': " + std::strerror(err));
}

std::string remove_part_set(const std::string& folder, const std::string& out_base) {
  const std::string name =
      folder.substr(folder.find_last_of('/') == std::string::npos ? 0 : folder.find_last_of('/') + 1);
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0) return std::string("it cannot be read (") + std::strerror(errno) + ")";
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a folder";
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return std::string("it cannot be opened (") + std::strerror(errno) + ")";
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{dir};
  const int rec = ::openat(dir, kPartRecordName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (rec < 0) return std::string("it has no ") + kPartRecordName + " naming this output";
  std::string text;
  char block[4096];
  for (ssize_t n; (n = ::read(rec, block, sizeof block)) > 0 && text.size() < kMaxRecordBytes;)
    text.append(block, static_cast<std::size_t>(n));
  ::close(rec);
  std::string damage;
  const auto record = parse_part_record(text, damage);
  if (!record) return std::string("its ") + kPartRecordName + " is damaged (" + damage + ")";
  if (record->output != out_base) return "its record names another output, '" + record->output + "'";
  if (record->folder != name) return "its record names another folder, '" + record->folder + "'";
  for (const auto& part : record->parts) {
    struct stat ps {};
    if (::fstatat(dir, part.c_str(), &ps, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ps.st_mode))
      ::unlinkat(dir, part.c_str(), 0);
  }
  ::unlinkat(dir, kPartRecordName, 0);
  fsync_fd_dir(dir);
  if (::rmdir(folder.c_str()) != 0)
    return std::string("its parts were removed, but it holds other files (") + std::strerror(errno) + ")";
  if (const int parent = ::open(dir_of(folder).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); parent >= 0) {
    ::fsync(parent);
    ::close(parent);
  }
  return {};
}

}  // namespace discount
