#include "tune/tune_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "tune/tune.h"
#include "util/error.h"
#include "util/memory_limit.h"

namespace specsim::tune {

namespace {
// A shown row's JSON object, its text and its line of the report: 514 MB peak RSS over 147,000
// rows (`tune --top 0 --json`, 4 batch sizes, steps/topk 16, 256 draft tokens; Debug build,
// 2026-12-02) is 3.5 KB a row, the program included.
constexpr std::size_t kShownRowBytes = 4000;

std::size_t shown_per_batch(std::size_t settings, std::size_t backends, std::size_t top) {
  const std::size_t all = settings * backends;
  return top == 0 ? all : std::min(top, all);
}
}  // namespace

std::size_t tune_memory_bytes(std::size_t settings, std::size_t batch_sizes, std::size_t backends, std::size_t top) {
  return batch_sizes *
         (settings * backends * sizeof(TuneRow) + shown_per_batch(settings, backends, top) * kShownRowBytes);
}

void check_tune_memory(std::size_t settings, std::size_t batch_sizes, std::size_t backends, std::size_t top) {
  const std::size_t need = tune_memory_bytes(settings, batch_sizes, backends, top), limit = run_memory_limit_bytes();
  if (need <= limit) return;
  const std::size_t ranked = batch_sizes * settings * backends * sizeof(TuneRow);
  // The most rows shown per batch size that fit beside every ranked row, and the most batch sizes
  // at the --top asked.
  const std::size_t most_top = ranked < limit ? (limit - ranked) / (batch_sizes * kShownRowBytes) : 0;
  const std::size_t most_batches = limit / tune_memory_bytes(settings, 1, backends, top);
  const std::string what = fmt::format(
      "tuning would rank {} settings x {} batch sizes x {} backends and show {} rows a batch size, about {:.1f} GiB, "
      "more than the {:.1f} GiB of memory a run may hold (half of the {:.1f} GiB this process may use)",
      settings, batch_sizes, backends, shown_per_batch(settings, backends, top), double(need) / double(1 << 30),
      double(limit) / double(1 << 30), double(usable_memory_bytes()) / double(1 << 30));
  if (most_top >= 1)
    throw InputError(
        fmt::format("{}: give --top at most {}, or --batch-size at most {} values", what, most_top, most_batches),
        "--top");
  throw InputError(fmt::format("{}: give --batch-size at most {} values, or lower --max-steps, --max-topk or "
                               "--max-draft-tokens",
                               what, most_batches),
                   "--batch-size");
}

}  // namespace specsim::tune
