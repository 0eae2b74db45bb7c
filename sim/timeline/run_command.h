#pragma once
// `specsim run` as one call: the outputs checked, the measurement files read, the scenario loaded
// (flags, scenario file, pasted SGLang command) and evaluated, the cycles simulated and their
// files written, the scenario saved; the caller prints what it returns.
#include <string>
#include <vector>

#include "scenario/measurement_files.h"
#include "timeline/run_cycles.h"

namespace specsim {

/// `specsim run`'s flags beyond the scenario's.
struct RunRequest {
  MeasurementFiles files;                  ///< --accept-from, --baseline-from, --anchor-trace
  CycleRequest cycles;                     ///< --cycles, --seed, --trace, --csv
  std::string scenario_file;               ///< --scenario
  std::string save_scenario;               ///< --save-scenario
  std::string sglang_args;                 ///< --sglang-args (one string)
  std::vector<std::string> sglang_tokens;  ///< after --: the command as pasted
  bool json = false;                       ///< --json
};

/// Runs it; returns the report (text, or JSON with --json) for stdout. InputError on bad input,
/// with no file written.
std::string run_command(RunArgs& args, const RunRequest& q);

}  // namespace specsim
