#pragma once
// Scenario files (JSON): the model, draft, hardware, settings, measurements with where they were
// taken, title and notes of one run. `specsim --save-scenario F` writes the resolved scenario;
// `specsim --scenario F` reads it back, flags on the command line overriding its settings.
#include <nlohmann/json.hpp>
#include <string>

#include "scenario/resolve.h"

namespace specsim {

/// The settings a run's report and a scenario file share, in SGLang's names (tp, speculative
/// settings, batch, context, CUDA graphs, NCCL path level); each adds its own fields to them.
nlohmann::json run_settings_json(const RunSpec& r);

/// The resolved scenario as a file; `model`/`draft`/`runtime` are the names or paths as given
/// (an empty `runtime`: the name of the scenario's runtime profile, or none).
nlohmann::json scenario_file_json(const Scenario& s, const std::string& model, const std::string& draft,
                                  const std::string& runtime = "");

/// Fills every run flag `args` lacks from the file (`where` names it in errors).
void args_from_scenario_file(const nlohmann::json& f, RunArgs& args, const std::string& where);

/// Puts the file's measurements (first), title and notes into a scenario resolved from it.
void apply_scenario_file(const nlohmann::json& f, Scenario& s, const std::string& where);

}  // namespace specsim
