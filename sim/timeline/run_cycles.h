#pragma once
// `specsim run --cycles N [--trace F] [--csv F]`: the scenario's cycles simulated one by one, each
// with its own accept length drawn (from --accept-from's log, or the chain model at the run's
// acceptance), their percentiles per backend, and the Perfetto trace / CSV of every backend (a sample of
// the cycles when many).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ingest/sglang_log.h"
#include "timeline/multi_cycle.h"

namespace specsim {

/// What a run asks of the simulated cycles.
struct CycleRequest {
  std::string trace, csv;  ///< output files (--trace, --csv)
  int cycles = 0;          ///< 0: not given (1 when a trace or CSV is asked); else 1..1e6
  int trace_cycles = 0;    ///< --trace-cycles: most cycles drawn (0: as many as fit kTraceSliceBudget)
  std::uint64_t seed = 1;
  const ingest::SglangLog* accept_log = nullptr;  ///< --accept-from's log: the draws follow it
  std::string accept_file;                        ///< its path, for errors
};

/// What the multi-cycle simulation found, per evaluated backend (label, stats).
struct CycleOutcome {
  bool ran = false;
  std::vector<std::pair<std::string, CycleStats>> stats;
  std::string accept_source;
  std::vector<std::string> notes;
};

/// Simulates the cycles and writes the trace/CSV (atomically; InputError naming the flag).
CycleOutcome run_cycles(const CycleRequest& q, const Scenario& s, const ScenarioResult& r);

/// Adds "cycles" to each scenario entry of the JSON report.
void add_cycles_json(nlohmann::json& report, const CycleOutcome& o);

/// The text section after the report.
std::string cycles_text(const CycleOutcome& o);

}  // namespace specsim
