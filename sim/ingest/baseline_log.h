#pragma once
// `--baseline-from LOG` (specsim run, specsim diagnose): an SGLang log of the same deployment
// decoding without speculation, read for its measured plain-decode tok/s. One reader, one set of
// checks, whichever command asks.
#include <optional>
#include <string>
#include <string_view>

#include "ingest/sglang_log_summary.h"

namespace specsim::ingest {

/// What a --baseline-from log measured: the decode lines used and their median gen throughput.
struct BaselineLog {
  std::string file;
  LogSummary lines;  ///< the lines used; lines.tok_s is their median gen throughput

  /// InputError naming --baseline-from when the log's launch ran another tp size than `tp_size`
  /// (`whose` names that deployment: "the log", "the scenario"). No launch line: nothing to compare.
  void check_tp(int tp_size, std::string_view whose) const;
};

/// Reads FILE: the decode lines at `batch_size` running requests (nullopt: the batch size most
/// lines ran at) of its launch with the most lines. InputError naming `--baseline-from FILE` when
/// no such line has a positive gen throughput, or when they report an accept len (speculation on).
BaselineLog read_baseline_log(const std::string& file, std::optional<int> batch_size);

}  // namespace specsim::ingest
