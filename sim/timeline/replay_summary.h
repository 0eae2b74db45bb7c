#pragma once
// `specsim ingest --replay-report`: a saved replay report read back into the analytic run's trace
// formats (measured beside predicted), and what it holds per phase.
#include <string>

namespace specsim {

/// Reads the report, writes --trace/--csv when asked (empty: not written) and returns its phases
/// (text, or JSON when `as_json`). InputError naming the file or the flag.
std::string replay_report_summary(const std::string& file, const std::string& trace_path, const std::string& csv_path,
                                  bool as_json);

}  // namespace specsim
