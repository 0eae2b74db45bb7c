#pragma once
// Where an SGLang log and the model disagree: each finding one line with its figure, the range
// the model expects and what to try. The ranges are the project's, explained in docs/diagnose.md.
#include <optional>
#include <string>
#include <vector>

#include "ingest/sglang_log_summary.h"
#include "ingest/sglang_server_args.h"

namespace specsim::diagnose {

using ingest::LogSummary;  // the summary lives with the log parser (--baseline-from reads it too)

struct Finding {
  std::string id;       ///< stable name (the JSON contract): overhead-out-of-range, graphs-off, ...
  bool warning = true;  ///< false: a note (speculation off, settings not modelled)
  std::string message;  ///< what was found, with its figure
  std::optional<double> figure;
  std::string unit;
  std::optional<double> range_lo, range_hi;  ///< the plausible range of the figure
  std::string advice;                        ///< what to try
  /// `message (range lo..hi unit): try advice` on one line.
  std::string line() const;
};

/// The model's and the log's figures the findings compare.
struct Figures {
  bool speculative = false;
  int steps = 0, topk = 0, draft_tokens = 0, tp_size = 1, cuda_graph_max_bs = 0;
  bool disable_cuda_graph = false;
  double model_step_us = 0;                  ///< plain decode step, no anchors
  double model_cycle_us = 0;                 ///< speculative cycle at the logged accept len, no anchors
  std::optional<double> measured_cycle_us;   ///< accept len x batch / tok/s
  std::optional<double> measured_step_us;    ///< batch / baseline tok/s
  std::optional<double> overhead_us;         ///< the per-target-forward term the scenario carries
  std::optional<double> implied_accept_len;  ///< what the measured tok/s implies (measured baseline)
  int allreduces_per_cycle = 0;              ///< in the speculative cycle (plain step without speculation)
  double allreduce_model_us = 0;             ///< one verify all-reduce, modelled, as the server ran it
  double nccl_allreduce_model_us = 0;        ///< the same with NCCL (what a measured all-reduce is)
  std::optional<double> allreduce_measured_us;
  std::string allreduce_source;
  bool allreduce_upper_bound = false;  ///< the measurement bounds the all-reduce from above only
  std::string allreduce_other_gpu;     ///< the GPU an nccl-tests log ran on, when not --hardware's
  bool model_too_slow = false;         ///< even half a step less than modelled cannot reach the tok/s
  long long context_len = 0;           ///< the context per request the scenario runs at
  /// Settings neither the log nor a flag stated, taken as SGLang's defaults: "tp 1 (--tp-size)", ...
  std::vector<std::string> defaulted;
};

/// The keys of a later SGLang release than v0.5.2 in a server_args line (models/stacks/
/// sglang-v0.5.18-newer-flags.csv): the newest release they date the server to ("" if none), the
/// key that says so, and each refused one whose value is not its default ("key=value").
struct LaterKeys {
  std::string release, by;
  std::vector<std::string> off_default;
};
LaterKeys later_release_keys(const ingest::ServerArgs& sa);

/// The findings for this log and these figures, warnings first.
std::vector<Finding> find_disagreements(const LogSummary& log, const Figures& f);

}  // namespace specsim::diagnose
