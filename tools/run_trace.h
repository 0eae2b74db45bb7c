#pragma once
// `specsim run`'s trace, CSV, multi-cycle and measurement-file flags (not a subcommand; kept
// out of cmd_run.cc so run stays a short script).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "timeline/multi_cycle.h"

namespace specsim::cli {

struct TraceArgs {
  std::string trace, csv;  ///< output files
  int cycles = 0;          ///< 0: not given (1 when a trace or CSV is asked); else 1..1e6
  std::uint64_t seed = 1;
  std::string accept_from;    ///< SGLang log: accept-len distribution
  std::string baseline_from;  ///< SGLang log without speculation: measured baseline tok/s
  std::string anchor_trace;   ///< torch profiler trace: measured NCCL all-reduce us
};

/// Adds --trace, --csv, --cycles, --seed, --accept-from, --baseline-from, --anchor-trace.
void add_trace_flags(CLI::App& app, TraceArgs& t);

/// Reads the measurement files into the run flags before the scenario is resolved; a flag given
/// twice (by file and by hand) is refused. Returns notes for the report.
std::vector<std::string> apply_measurement_files(const TraceArgs& t, RunArgs& args);

/// InputError naming the line when --accept-from's log holds an accept len above the resolved
/// scenario's --speculative-num-steps + 1: the log ran a deeper draft (its mean would mislead).
void check_accept_log_depth(const TraceArgs& t, const Scenario& s);

/// What the multi-cycle simulation found, per evaluated backend (label, stats).
struct TraceOutcome {
  bool ran = false;
  std::vector<std::pair<std::string, CycleStats>> stats;
  std::string accept_source;
  std::vector<std::string> notes;
};

/// Simulates the cycles and writes the trace/CSV (atomically; InputError naming the flag).
TraceOutcome run_trace_outputs(const TraceArgs& t, const Scenario& s, const ScenarioResult& r);

/// Adds "cycles" to each scenario entry of the JSON report.
void add_cycles_json(nlohmann::json& report, const TraceOutcome& o);
/// The text section after the report.
std::string cycles_text(const TraceOutcome& o);

}  // namespace specsim::cli
