#include "util/memory_limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace specsim {

namespace {

// A cgroup's memory limit in bytes (v2 `memory.max`, v1 `memory.limit_in_bytes`); 0 when there is
// none ("max", or v1's huge "unlimited") or it cannot be read.
std::size_t cgroup_memory_limit() {
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(f);
    std::string v;
    if (!(in >> v) || v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) continue;
    const unsigned long long n = std::stoull(v);
    if (n > 0 && n < (1ULL << 60)) return static_cast<std::size_t>(n);
  }
  return 0;
}

// The soft limit of a resource in bytes, 0 when unlimited.
std::size_t soft_rlimit_bytes(int resource) {
  struct rlimit r {};
  if (::getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<std::size_t>(r.rlim_cur);
}

}  // namespace

std::size_t usable_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  std::size_t m =
      pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : std::size_t(16) << 30;
  for (const std::size_t cap : {cgroup_memory_limit(), soft_rlimit_bytes(RLIMIT_AS), soft_rlimit_bytes(RLIMIT_DATA)})
    if (cap > 0) m = std::min(m, cap);
  return m;
}

std::size_t run_memory_limit_bytes() { return usable_memory_bytes() / 2; }

}  // namespace specsim
