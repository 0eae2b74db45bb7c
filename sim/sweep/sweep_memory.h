#pragma once
// What a sweep will hold in memory (its points, then the CSV/JSON text built from them), checked
// against the machine's memory before any point runs.
#include <cstddef>

namespace specsim::sweep {

/// Bytes a sweep of `points` points holds at its peak: the results plus the text of each output
/// (CSV, JSON) asked for, built in per-thread pieces and then joined (two copies).
std::size_t sweep_memory_bytes(std::size_t points, bool csv, bool json);

/// The most a sweep may hold: half of the machine's physical memory (8 GiB when it cannot be read).
std::size_t sweep_memory_limit_bytes();

/// InputError naming the grid flags when the sweep would exceed sweep_memory_limit_bytes().
void check_sweep_memory(std::size_t points, bool csv, bool json);

}  // namespace specsim::sweep
