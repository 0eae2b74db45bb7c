#pragma once
// What `specsim replay` writes and prints once the GPU has measured: the report (-o), the trace
// and CSV of measured beside predicted, and the report for stdout.
#include <string>

#include "evaluate/evaluate_scenario.h"
#include "plan/replay_measurement.h"
#include "scenario/resolve.h"

namespace specsim {

/// The replay's outputs (empty paths: not written).
struct ReplayOutputFiles {
  std::string out_path, trace_path, csv_path;  ///< -o, --trace, --csv
  bool json = false;                           ///< --json: stdout gets the report as JSON
};

/// -o, --trace and --csv checked together before anything runs (not the scenario's inputs).
void check_replay_outputs(const ReplayOutputFiles& f, const RunArgs& args);

/// Writes the files and returns the report for stdout (text, or JSON with --json).
std::string replay_outputs(const Scenario& s, const ScenarioResult& r, const ReplayMeasurement& m,
                           const ReplayOutputFiles& f);

}  // namespace specsim
