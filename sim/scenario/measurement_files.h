#pragma once
// The measurement files a run takes anchors and acceptance from: --accept-from (an SGLang log's
// accept lens), --baseline-from (a log's plain-decode tok/s), --anchor-trace (a torch trace's NCCL
// all-reduce time). Each is read once into the run flags before the scenario is resolved, and
// checked against the scenario once it is.
#include <optional>
#include <string>
#include <vector>

#include "ingest/baseline_log.h"
#include "ingest/sglang_log.h"
#include "scenario/resolve.h"

namespace specsim {

/// The files as given (empty: not given).
struct MeasurementFiles {
  std::string accept_from;    ///< SGLang log: accept-len distribution
  std::string baseline_from;  ///< SGLang log without speculation: measured baseline tok/s
  std::string anchor_trace;   ///< torch profiler trace: measured NCCL all-reduce us
};

/// What was read from them.
struct Measurements {
  std::string accept_file;                      ///< --accept-from
  std::optional<ingest::SglangLog> accept_log;  ///< its parsed log (the cycles draw from it)
  std::optional<ingest::BaselineLog> baseline;  ///< --baseline-from's lines
  std::vector<std::string> notes;               ///< what each file gave, for the report

  /// Against the resolved scenario: --accept-from's log no deeper than its draft (when it
  /// speculates), --baseline-from's log of its tp size. InputError naming the file.
  void check(const Scenario& s) const;
  /// Where --accept-from's log ran another target or draft shape than `s` (from its server_args
  /// line): a note each, said beside the report (the logged accept len is used as given).
  std::vector<std::string> mismatches(const Scenario& s) const;
};

/// Reads the files into the run flags; a value given both by a file and by its flag is refused.
Measurements read_measurement_files(const MeasurementFiles& f, RunArgs& args);

/// --accept-from's draft shape, from its log's server_args line, into a run that names none
/// (no --speculative-num-steps, -eagle-topk or -num-draft-tokens): the accept len is then used at
/// the settings it was measured at (the algorithm stays the run's). A note saying so, or "" when
/// nothing was taken.
std::string adopt_accept_log_shape(const Measurements& m, RunArgs& args);

/// --baseline-from's context (its lines' median tokens per running request) into a run that names
/// none (no --context-len): the baseline is then anchored at the context it was measured at. A
/// note saying so, or "" when nothing was taken.
std::string adopt_baseline_log_context(const Measurements& m, RunArgs& args);

/// InputError naming FILE:LINE when `log` holds an accept len above `steps` + 1: the log ran a
/// deeper draft (its mean would mislead, and no draw of this draft can produce it).
void check_accept_depth(const ingest::SglangLog& log, const std::string& file, int steps);

}  // namespace specsim
