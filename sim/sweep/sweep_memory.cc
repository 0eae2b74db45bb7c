#include "sweep/sweep_memory.h"

#include <fmt/format.h>
#include <unistd.h>

#include "sweep/sweep.h"
#include "util/error.h"

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

std::size_t sweep_memory_limit_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::size_t(8) << 30;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2;
}

void check_sweep_memory(std::size_t points, bool csv, bool json) {
  const std::size_t need = sweep_memory_bytes(points, csv, json), limit = sweep_memory_limit_bytes();
  if (need > limit)
    throw InputError(fmt::format("this grid of {} points would hold about {:.1f} GiB, more than half of this "
                                 "machine's memory ({:.1f} GiB): sweep fewer values",
                                 points, double(need) / double(1 << 30), double(limit) / double(1 << 30)),
                     "sweep grid");
}

}  // namespace specsim::sweep
