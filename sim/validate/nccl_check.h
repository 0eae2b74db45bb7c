#pragma once
// The shipped NCCL model (uncalibrated) against real nccl-tests logs (traces/nccl-tests/):
// predicted vs measured all-reduce time per log and message size.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace specsim {

struct NcclCheckRow {
  double bytes = 0, measured_us = 0, predicted_us = 0;
  double collective_us = 0;  ///< the collective on the GPUs (the model's NCCL estimate)
  std::string choice;        ///< the algorithm/protocol/transport the model picked
  bool host_bound = false;   ///< the harness's host launch, not the collective, set predicted_us
};

struct NcclCheckLog {
  std::string file, hardware;
  std::string launch;  ///< how the ranks were driven (one thread for all GPUs, one process per GPU, ...)
  int gpus = 0;
  int gpus_per_thread = 1;  ///< nccl-tests `-g N`: one thread launches N collectives per iteration
  int iters = 20;           ///< timed iterations per size (nccl-tests `-n`, default 20)
  bool graph = false;
  /// Host time of one thread launching its gpus_per_thread grouped collectives, priced into
  /// predicted_us (harness_launch.h); 0 when the log runs one GPU per thread (or is not priced).
  double host_launch_us = 0;
  std::vector<NcclCheckRow> rows;  ///< sizes in [min_bytes, max_bytes] that the log holds
  /// The log's largest size below min_bytes (its latency), shown but not scored.
  std::optional<NcclCheckRow> latency_point;
  double worst_small_pct = 0;  ///< worst |error| at 8-64 KB (0 when the log has none there)
  int small_rows = 0;
};

/// Reads `dir`/index.json and every log it names (an nccl-tests log, or with `"format": "points"`
/// a table of `bytes time_us` lines as its source printed it); rows between `min_bytes` and `max_bytes`.
/// InputError naming index.json:field or the log's file:line on bad input.
std::vector<NcclCheckLog> run_nccl_check(const std::string& dir, double min_bytes, double max_bytes);

std::string nccl_check_text(const std::vector<NcclCheckLog>& logs);
nlohmann::json nccl_check_json(const std::vector<NcclCheckLog>& logs);

}  // namespace specsim
