#pragma once
// SGLang's gen throughput is the tokens generated since the previous decode line over the time
// since it (scheduler_metrics_mixin.py: num_generated_tokens / gap_latency). The first decode
// line after idle time divides its tokens by the idle time too: 0.39 tok/s on a server decoding
// at 170 (traces/sglang-logs/real-eagle3-idle-gap-sglang-11948.log). Such a line measures the
// idle time, not decoding, and is left out of the throughput figures, said so
// (docs/sources.md#S-sglang-log-field, docs/diagnose.md#idle-gaps).
#include <optional>
#include <string>
#include <vector>

#include "ingest/sglang_log.h"

namespace specsim::ingest {

/// A decode line whose throughput is below this share of the run's median ...
constexpr double kIdleGapShare = 0.10;
/// ... and whose interval, where the timestamps give it, exceeds this many logging intervals
/// (the median interval between the run's decode lines) ...
constexpr double kIdleGapIntervals = 5;
/// ... of at least the resolution of SGLang's timestamps (whole seconds, `[2025-10-22 10:27:57 TP0]`
/// in docs/sources.md#S-sglang-log-field).
constexpr double kLogTimestampResolutionS = 1;

/// A decode line left out of the throughput figures, and why.
struct IdleGapLine {
  std::size_t line = 0;
  double gen_tok_s = 0;
  std::string why;  ///< "first decode line of the launch: ..." or "42 s after the previous decode line ..."
};

/// The throughput lines of a run split into the ones that measure decoding and the idle gaps.
struct ThroughputLines {
  std::vector<const DecodeLine*> kept;  ///< in log order
  std::vector<IdleGapLine> idle;        ///< in log order
};

/// Splits the decode lines of one run (one launch, one #running-req, positive throughput, log
/// order). A line is an idle gap when its gen throughput is below kIdleGapShare of the lines'
/// median and its interval is unknown (the first decode line of its launch, or no timestamps)
/// or longer than kIdleGapIntervals logging intervals. At least the median line is kept.
ThroughputLines split_idle_gaps(const std::vector<const DecodeLine*>& lines);

/// The median of `v` (not empty).
double median_of(std::vector<double> v);

}  // namespace specsim::ingest
