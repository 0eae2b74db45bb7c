#pragma once
// The output of SGLang's scripts/playground/bench_speculative.py: one JSON object per line, one per
// setting it launched a server for, {"batch_size", "steps", "topk", "num_draft_tokens",
// "acc_length", "step_time", "speed", ...}. `speed` is per request stream: acc_length / step_time,
// step_time the 20th percentile of the server's decode step (a cycle when speculating) at that
// batch size. steps = topk = num_draft_tokens = 0 is plain decoding (acc_length 1).
#include <string>
#include <vector>

namespace specsim::ingest {

struct BenchSpecRow {
  int line = 0;  ///< 1-based, for errors and sources
  int batch_size = 0, steps = 0, topk = 0, num_draft_tokens = 0;
  double acc_length = 1, step_time_s = 0, speed = 0;
  bool speculative() const { return steps > 0; }
};

/// Every row of the file; InputError naming FILE:LINE and the field on a line that is not such an
/// object, a missing or non-numeric field, or a value out of range (batch size, steps or topk
/// outside 0..1024, a speculative row with topk or draft tokens 0, acc_length outside 1..steps + 1,
/// a step time or speed not positive, or a speed that is not acc_length / step_time within 1%).
/// Blank lines are skipped; a file with no row is refused.
std::vector<BenchSpecRow> read_bench_speculative(const std::string& path, const std::string& flag);

}  // namespace specsim::ingest
