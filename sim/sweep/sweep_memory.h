#pragma once
// What a sweep will hold in memory (its points, then the CSV/JSON text built from them), checked
// against the memory this process may use (util/memory_limit.h) before any point runs.
#include <cstddef>

#include "sweep/grid.h"

namespace specsim::sweep {

/// Bytes a sweep of `points` points holds at its peak: the results plus the text of each output
/// (CSV, JSON) asked for, built in per-thread pieces and then joined (two copies).
std::size_t sweep_memory_bytes(std::size_t points, bool csv, bool json);

/// The most a sweep may hold: run_memory_limit_bytes() (util/memory_limit.h), half of the memory
/// this process may use.
std::size_t sweep_memory_limit_bytes();

/// InputError naming the flag of the grid's longest value list, and the most values it may keep,
/// when the sweep would exceed sweep_memory_limit_bytes().
void check_sweep_memory(const Grid& grid, bool csv, bool json);

}  // namespace specsim::sweep
