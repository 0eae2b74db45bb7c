#pragma once
// A DP-attention server logs one decode line per DP rank per interval, each with that rank's own
// batch and throughput. The server's figures are their sums over one window (one line of each
// rank), not any one rank's line.
#include "ingest/sglang_log.h"

namespace specsim {

/// The log with each window of DP-rank lines (consecutive lines of distinct ranks of one launch)
/// summed into one line: running requests, KV tokens and gen throughput added, accept len and
/// rate averaged weighted by running requests. A log without rank tags comes back unchanged.
ingest::SglangLog sum_dp_ranks(const ingest::SglangLog& log);

/// The most DP ranks one window of `log` held (0: no rank tags).
int dp_ranks_in(const ingest::SglangLog& log);

}  // namespace specsim
