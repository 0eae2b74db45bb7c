#include "sweep/sweep_memory.h"

#include <fmt/format.h>

#include "sweep/sweep.h"
#include "util/memory_limit.h"

namespace specsim::sweep {

namespace {
// Upper bounds of one point's text (measured rows run to ~250 B of CSV and ~600 B of JSON).
constexpr std::size_t kCsvRowBytes = 400, kJsonRowBytes = 1000;

}  // namespace

std::size_t sweep_memory_bytes(std::size_t points, bool csv, bool json) {
  std::size_t per_point = sizeof(PointResult);
  if (csv) per_point += 2 * kCsvRowBytes;
  if (json) per_point += 2 * kJsonRowBytes;
  return points * per_point;
}

std::size_t sweep_memory_limit_bytes() { return run_memory_limit_bytes(); }

void check_sweep_memory(const Grid& grid, bool csv, bool json) {
  const std::size_t points = grid.size(), need = sweep_memory_bytes(points, csv, json),
                    limit = sweep_memory_limit_bytes();
  if (need <= limit) return;
  refuse_grid(
      grid, limit / sweep_memory_bytes(1, csv, json),
      fmt::format(
          "would hold about {:.1f} GiB, more than the {:.1f} GiB of memory a sweep may hold (half of the {:.1f} GiB "
          "this process may use)",
          double(need) / double(1 << 30), double(limit) / double(1 << 30),
          double(usable_memory_bytes()) / double(1 << 30)));
}

}  // namespace specsim::sweep
