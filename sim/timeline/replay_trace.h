#pragma once
// Measured latency traces from a GPU replay: a replay report (what `specsim replay -o` writes) as
// the same Chrome trace and CSV the analytic run writes, with the predicted timeline beside it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace specsim {

/// One distinct op of a replayed block, as the report holds it.
struct ReplayTraceOp {
  std::string block, name, kind, dtype, ran_dtype, note;
  int repeat = 1;
  double m = 0, n = 0, k = 0, batch = 0, experts = 0, flops = 0, bytes = 0;
  double measured_us = 0;   ///< per call, eager CUDA-event time (carries launch gaps)
  double predicted_us = 0;  ///< per call, the analytic engine
};

/// One op call placed in time, microseconds from the trace's start.
struct ReplayTraceEvent {
  const ReplayTraceOp* op = nullptr;
  int layer = 0;                              ///< repeat index within the block
  double start_us = 0, dur_us = 0;            ///< measured, scaled (see ReplayTracePhase::scale)
  double pred_start_us = 0, pred_dur_us = 0;  ///< predicted
};

/// One replayed forward of one phase.
struct ReplayTracePhase {
  std::string name;
  bool graph = true;
  int tokens = 0;
  double measured_us = 0;   ///< median graph replay (graph) or eager forward (eager)
  double predicted_us = 0;  ///< analytic phase time, graph launch included
  double launch_us = 0;     ///< predicted host launch share placed first (graph replay launch)
  double event_sum_us = 0;  ///< sum of the ops' eager event times over all calls
  double scale = 1;         ///< measured_us / event_sum_us: the factor on every measured op slice
  double start_us = 0;      ///< where this phase starts on both tracks
  std::vector<ReplayTraceOp> ops;
  std::vector<ReplayTraceEvent> events;  ///< blocks in order, each block's repeats in order
};

struct ReplayTrace {
  std::string source;  ///< the file (or "replay report") errors and notes name
  std::string device, date, model, hardware, collectives;
  int tp = 1, gpus = 1;
  std::vector<std::string> report_notes;
  std::vector<ReplayTracePhase> phases;
  long long events() const;
};

/// Reads and lays out a replay report; InputError `(where: field)` for anything missing or bad.
ReplayTrace replay_trace_from_report(const nlohmann::json& report, const std::string& where);

/// Chrome Trace Event JSON: one process, tracks measured phases / measured GPU stream / predicted
/// phases / predicted GPU stream / predicted host launches.
std::string replay_chrome_trace(const ReplayTrace& t);

/// CSV: the analytic run's 13 columns (cycle 0, rank 0; comm_bytes empty: reports do not hold it)
/// with the measured (scaled) start/dur, then measured_event_us,predicted_start_us,predicted_dur_us.
std::string replay_trace_csv(const ReplayTrace& t);

/// Builds both files from `report` first (so a bad report writes nothing), then writes each
/// non-empty path through write_file_atomic (flags --trace, --csv).
void write_replay_trace_files(const nlohmann::json& report, const std::string& where, const std::string& trace_path,
                              const std::string& csv_path);

}  // namespace specsim
