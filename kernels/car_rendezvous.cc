// Unix-socket rendezvous (see car_rendezvous.h). Rank 0 listens; ranks 1..world-1 connect
// (retrying until the deadline, so start order does not matter), send their record and read
// back the whole table. Every blocking step is bounded by the same deadline.
#include "car_rendezvous.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace specsim::car::detail {
namespace {

using Clock = std::chrono::steady_clock;

/// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("custom all-reduce rendezvous: " + what); }

std::string sys_error(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

/// Waits until `fd` is ready for `events`; false on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, ms_left(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) fail(sys_error("poll"));
  }
}

void send_all(int fd, const void* data, std::size_t n, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    if (!wait_fd(fd, POLLOUT, deadline)) fail("timed out sending");
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail(sys_error("send"));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void recv_all(int fd, void* data, std::size_t n, Clock::time_point deadline, const char* what) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (!wait_fd(fd, POLLIN, deadline)) fail(std::string("timed out waiting for ") + what);
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r == 0) fail(std::string("peer closed the connection before sending ") + what);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail(sys_error("recv"));
    }
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

sockaddr_un socket_address(const std::string& dir, const std::string& tag) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir + "/specsim-car-" + tag + ".sock";
  if (path.size() >= sizeof(addr.sun_path))
    fail("socket path '" + path + "' is longer than " + std::to_string(sizeof(addr.sun_path) - 1) +
         " characters; use a shorter rendezvous directory");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

std::vector<JoinRecord> serve(const sockaddr_un& addr, const JoinRecord& mine, Clock::time_point deadline) {
  Fd lis(::socket(AF_UNIX, SOCK_STREAM, 0));
  if (lis.fd < 0) fail(sys_error("socket"));
  ::unlink(addr.sun_path);  // a stale socket from an earlier run
  if (::bind(lis.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    fail(sys_error("bind") + " (" + addr.sun_path + ")");
  if (::listen(lis.fd, 16) != 0) fail(sys_error("listen"));

  std::vector<JoinRecord> table(static_cast<std::size_t>(mine.world));
  std::vector<bool> seen(table.size(), false);
  table[0] = mine;
  seen[0] = true;
  std::vector<int> conns;
  struct CloseAll {
    std::vector<int>& c;
    ~CloseAll() {
      for (int f : c) ::close(f);
    }
  } closer{conns};
  for (int joined = 1; joined < mine.world;) {
    if (!wait_fd(lis.fd, POLLIN, deadline)) {
      std::string missing;
      for (std::size_t r = 0; r < seen.size(); ++r)
        if (!seen[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      fail("timed out: rank(s) " + missing + " never joined (" + addr.sun_path + ")");
    }
    const int c = ::accept(lis.fd, nullptr, nullptr);
    if (c < 0) {
      if (errno == EINTR) continue;
      fail(sys_error("accept"));
    }
    conns.push_back(c);
    JoinRecord rec{};
    recv_all(c, &rec, sizeof rec, deadline, "a join record");
    if (rec.magic != kJoinMagic) fail("a foreign process connected to the rendezvous socket");
    if (rec.world != mine.world)
      fail("rank " + std::to_string(rec.rank) + " was started with world size " + std::to_string(rec.world) +
           ", rank 0 with " + std::to_string(mine.world));
    if (rec.rank <= 0 || rec.rank >= mine.world || seen[static_cast<std::size_t>(rec.rank)])
      fail("duplicate or invalid rank " + std::to_string(rec.rank));
    seen[static_cast<std::size_t>(rec.rank)] = true;
    table[static_cast<std::size_t>(rec.rank)] = rec;
    ++joined;
  }
  for (int c : conns) send_all(c, table.data(), table.size() * sizeof(JoinRecord), deadline);
  ::unlink(addr.sun_path);
  return table;
}

std::vector<JoinRecord> join(const sockaddr_un& addr, const JoinRecord& mine, Clock::time_point deadline) {
  for (;;) {
    Fd s(::socket(AF_UNIX, SOCK_STREAM, 0));
    if (s.fd < 0) fail(sys_error("socket"));
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      send_all(s.fd, &mine, sizeof mine, deadline);
      std::vector<JoinRecord> table(static_cast<std::size_t>(mine.world));
      recv_all(s.fd, table.data(), table.size() * sizeof(JoinRecord), deadline, "the table from rank 0");
      return table;
    }
    if (errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN && errno != EINTR)
      fail(sys_error("connect") + " (" + addr.sun_path + ")");
    if (ms_left(deadline) == 0) fail("timed out: rank 0 never opened " + std::string(addr.sun_path));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::vector<JoinRecord> rendezvous(const std::string& dir, const std::string& tag, const JoinRecord& mine,
                                   double timeout_s) {
  const sockaddr_un addr = socket_address(dir, tag);
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000.0));
  return mine.rank == 0 ? serve(addr, mine, deadline) : join(addr, mine, deadline);
}

}  // namespace specsim::car::detail
