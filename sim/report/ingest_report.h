#pragma once
// What `specsim ingest` prints about a measurement file: what was read from it and what specsim
// takes from it, as text or (with --json) one JSON object.
#include <string>

namespace specsim {

/// A torch-profiler trace: kernel time per kind, per step (`steps_flag` when it has no
/// ProfilerStep markers; 0: totals).
std::string torch_trace_summary(const std::string& file, int steps_flag, bool as_json);

/// An SGLang server log: its lines, the accept len and the plain-decode throughput it holds.
std::string sglang_log_summary(const std::string& file, bool as_json);

/// An nccl-tests log: its tables, row by row.
std::string nccl_tests_summary(const std::string& file, bool as_json);

}  // namespace specsim
