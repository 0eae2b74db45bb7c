#include "util/bounded_read.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "util/error.h"
#include "util/gzip.h"
#include "util/inputs_read.h"

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
std::string secs(int ms) { return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms"; }

}  // namespace

std::string read_bounded(const std::string& path, const std::string& where, std::size_t max_bytes, PipeTimeouts pipe) {
  if (path.empty()) throw InputError("an empty file name: give the path of a file", where);
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
  const bool is_pipe = S_ISFIFO(st.st_mode);
  if (!is_pipe) note_input_read(path, st.st_dev, st.st_ino);  // no output may replace it
  // A pipe (`--model-path <(...)`, /dev/stdin) can be read once; a run may read one input several
  // times (the explanation search resolves the scenario again), so the first read is kept.
  static std::mutex pipes_mutex;
  static std::map<std::string, std::string> pipes_read;
  if (is_pipe) {
    const std::lock_guard lock(pipes_mutex);
    if (const auto it = pipes_read.find(path); it != pipes_read.end()) return it->second;
  }
  // A file reads blocking. A pipe stays non-blocking: a read with no writer is the end (a fifo
  // nobody opened reads as empty), one with a silent writer waits in poll() with a deadline.
  if (!is_pipe) ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed_ms = [&] {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
  };
  auto still_open = [&] {
    return InputError("'" + path + "' is a pipe still open after " + secs(pipe.total_ms) +
                          ": specsim reads a pipe until its writer closes it (tail -f never does); give a file",
                      where);
  };
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && is_pipe && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int left = pipe.total_ms - elapsed_ms();
      if (left <= 0) throw still_open();
      pollfd p{f.fd, POLLIN, 0};
      const int r = ::poll(&p, 1, std::min(left, pipe.idle_ms));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError("cannot read '" + path + "': " + std::strerror(errno), where);
      if (r == 0) {
        if (pipe.idle_ms < left)
          throw InputError("'" + path + "' is a pipe that sent nothing for " + secs(pipe.idle_ms) +
                               " and was not closed: is its writer stuck? (specsim reads a pipe until it is closed)",
                           where);
        throw still_open();
      }
      continue;
    }
    if (n < 0) throw InputError("cannot read '" + path + "': " + std::strerror(errno), where);
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      throw InputError("'" + path + "' holds more than " + mib(max_bytes) + ", the most specsim reads", where);
    text.append(buf, static_cast<std::size_t>(n));
    if (is_pipe && elapsed_ms() > pipe.total_ms) throw still_open();
  }
  // A gzip file (a torch profiler trace is saved as .json.gz by default) reads as its content,
  // bounded as every input is.
  if (is_gzip(text)) text = gunzip_bounded(text, path, where, max_bytes);
  if (is_pipe) {
    const std::lock_guard lock(pipes_mutex);
    pipes_read[path] = text;
  }
  return text;
}

}  // namespace specsim
