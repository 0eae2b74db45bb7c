#pragma once
// N processes of one test binary on one GPU (fork/exec of the binary with --child RANK WORLD DIR
// MODE), as the CUDA IPC tests run them: the children rendezvous in a fresh folder and each
// checks its own results; the group passes when every child exits 0 within the deadline.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace cartest {

/// A group's deadline: under time-slicing a child can wait many time slices for its peers.
inline constexpr double kGroupDeadlineS = 240.0;

/// Runs `world` children of this binary in `mode`; true when all exit 0 in time.
inline bool run_group(const char* self, int world, const char* mode) {
  char tmpl[] = "/tmp/carXXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  if (!dir) {
    std::perror("mkdtemp");
    return false;
  }
  std::vector<pid_t> kids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::string rs = std::to_string(r), ws = std::to_string(world);
      ::execl(self, self, "--child", rs.c_str(), ws.c_str(), dir, mode, static_cast<char*>(nullptr));
      std::perror("execl");
      ::_exit(127);
    }
    kids.push_back(pid);
  }
  bool ok = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kGroupDeadlineS);
  std::size_t left = kids.size();
  while (left > 0) {
    for (pid_t& k : kids) {
      if (k <= 0) continue;
      int status = 0;
      const pid_t r = ::waitpid(k, &status, WNOHANG);
      if (r == k) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          std::fprintf(stderr, "FAIL: %s world %d: child pid %d exited with status %d\n", mode, world, k,
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
          ok = false;
        }
        k = 0;
        --left;
      }
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "FAIL: %s world %d: children still running after %.0f s; killing\n", mode, world,
                   kGroupDeadlineS);
      for (pid_t k : kids)
        if (k > 0) ::kill(k, SIGKILL);
      for (pid_t k : kids)
        if (k > 0) ::waitpid(k, nullptr, 0);
      ok = false;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::rmdir(dir);
  return ok;
}

}  // namespace cartest
