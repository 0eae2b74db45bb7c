#pragma once
// Reading an input file with a size cap: a regular file or a pipe, never a device, and never more
// than kMaxInputBytes, so /dev/zero, an endless pipe or a 10 GB file is a clear error, not an
// exhausted memory. A pipe is also bounded in time: one whose writer never closes it (`tail -f`)
// or stops sending is an error after kPipeTotalMs or kPipeIdleMs, not a hang.
#include <cstddef>
#include <string>

namespace specsim {

/// The largest input file specsim reads (the biggest real input, a torch trace, is tens of MiB).
constexpr std::size_t kMaxInputBytes = std::size_t(256) << 20;
/// The longest a pipe or fifo may take to deliver all of its input, in milliseconds.
constexpr int kPipeTotalMs = 60'000;
/// The longest a pipe or fifo may send nothing before its writer closes it, in milliseconds.
constexpr int kPipeIdleMs = 10'000;

/// How long a pipe may take: in all, and without sending a byte.
struct PipeTimeouts {
  int total_ms = kPipeTotalMs, idle_ms = kPipeIdleMs;
};

/// The whole file at `path`; InputError naming `where` when it is missing, a folder, a device,
/// unreadable, larger than `max_bytes`, or a pipe that outlasts `pipe` (still open, or silent).
/// A fifo without a writer reads as empty (no hang).
std::string read_bounded(const std::string& path, const std::string& where, std::size_t max_bytes = kMaxInputBytes,
                         PipeTimeouts pipe = {});

}  // namespace specsim
