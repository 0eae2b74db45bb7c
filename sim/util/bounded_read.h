#pragma once
// Reading an input file with a size cap: a regular file or a pipe, never a device, and never more
// than kMaxInputBytes, so /dev/zero, an endless pipe or a 10 GB file is a clear error, not an
// exhausted memory.
#include <cstddef>
#include <string>

namespace specsim {

/// The largest input file specsim reads (the biggest real input, a torch trace, is tens of MiB).
constexpr std::size_t kMaxInputBytes = std::size_t(256) << 20;

/// The whole file at `path`; InputError naming `where` when it is missing, a folder, a device,
/// unreadable, or larger than `max_bytes`. A fifo without a writer reads as empty (no hang).
std::string read_bounded(const std::string& path, const std::string& where, std::size_t max_bytes = kMaxInputBytes);

}  // namespace specsim
