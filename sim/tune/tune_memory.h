#pragma once
// What a tuning run will hold (every ranked row, and the JSON of the rows shown), checked against
// the memory this process may use (util/memory_limit.h) before any setting is evaluated.
#include <cstddef>

namespace specsim::tune {

/// Bytes a tuning run holds at its peak: `settings` x `backends` ranked rows per batch size, and
/// of those the `top` shown (0: all) rendered as JSON (always built) and text.
std::size_t tune_memory_bytes(std::size_t settings, std::size_t batch_sizes, std::size_t backends, std::size_t top);

/// InputError naming --top (or --batch-size when even one row a batch size is too many) with the
/// largest value that fits, when tune_memory_bytes exceeds run_memory_limit_bytes().
void check_tune_memory(std::size_t settings, std::size_t batch_sizes, std::size_t backends, std::size_t top);

}  // namespace specsim::tune
