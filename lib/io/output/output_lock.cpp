#include "io/output/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/host.hpp"
#include "common/quote.hpp"

namespace discount {

HeldLock::~HeldLock() {
  if (fd.get() >= 0) ::unlink(path.c_str());  // while still held: see take_output_lock
}

// flock() on the lock file, kept open for the whole run: the kernel drops it
// when the process ends however it ends, so a file left by kill -9 never
// blocks; its text (pid, host) only names the holder. The holder unlinks the
// file before closing it, so a job that locked an unlinked file (opened just
// before) sees another inode at the path and tries again. Under MPI the
// output's owner (rank 0) holds it for the job's ranks. On NFS, flock()
// works across clients only where the mount supports it.
HeldLock take_output_lock(const std::string& path, const std::string& what) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw create_error("cannot create the lock file '" + path + "': " + std::strerror(errno));
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err != EWOULDBLOCK)
        throw create_error("cannot lock '" + path + "': " + std::strerror(err) +
                           " (on NFS, flock needs a mount that supports it)");
      char text[256] = {};
      const ssize_t n = ::pread(fd.get(), text, sizeof text - 1, 0);
      std::string holder = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : std::string();
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      holder = printable_for_message(holder, 100);  // the lock file may hold anything
      throw create_error("another job is writing '" + what + "' (" +
                         (holder.empty() ? std::string("holder unknown") : holder) + ", lock '" + path +
                         "'); wait for it to finish, or stop it and rerun to resume");
    }
    struct stat held {
    }, now{};
    if (::fstat(fd.get(), &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      const std::string text = "pid " + std::to_string(::getpid()) + " on host " + host_name() + "\n";
      if (::ftruncate(fd.get(), 0) == 0) {
        const ssize_t written = ::pwrite(fd.get(), text.data(), text.size(), 0);
        (void)written;  // the text is informative only
      }
      HeldLock lock;
      lock.fd = std::move(fd);
      lock.path = path;
      return lock;
    }
  }
  throw create_error("cannot take the lock '" + path + "': it keeps being replaced");
}

}  // namespace discount
