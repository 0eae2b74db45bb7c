#include "util/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace specsim {

namespace {

// Closes the descriptor on every exit path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string read_bounded(const std::string& path, const std::string& where, std::size_t max_bytes) {
  // O_NONBLOCK: opening a fifo that no process writes returns at once instead of waiting forever.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT) throw InputError("file not found: " + path, where);
    throw InputError("cannot read '" + path + "': " + std::strerror(errno), where);
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputError("cannot read '" + path + "'", where);
  if (S_ISDIR(st.st_mode)) throw InputError("expected a file, found a directory: " + path, where);
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw InputError("'" + path + "' is a device or socket, not a file: give a regular file", where);
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes)
    throw InputError("'" + path + "' is larger than " + mib(max_bytes) + ", the most specsim reads", where);
  // Blocking reads from here: a pipe with a writer is read until that writer closes it.
  ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("cannot read '" + path + "': " + std::strerror(errno), where);
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      throw InputError("'" + path + "' holds more than " + mib(max_bytes) + ", the most specsim reads", where);
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace specsim
