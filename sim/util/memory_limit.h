#pragma once
// How much memory this process may use, for the commands that estimate what they will hold (a
// sweep's grid, tune's rankings) and refuse before allocating rather than being killed.
#include <cstddef>

namespace specsim {

/// The machine's physical memory, bounded by its cgroup's memory limit (a container's, enforced
/// by the kernel's OOM killer with no error line) and by `ulimit -v` / `ulimit -d` (16 GiB when
/// the physical memory cannot be read).
std::size_t usable_memory_bytes();

/// The most one run may plan to hold: half of usable_memory_bytes() (the rest for the program,
/// its inputs and what the estimate leaves out).
std::size_t run_memory_limit_bytes();

}  // namespace specsim
