#pragma once
// The one way a scenario file becomes a Scenario (`run --scenario`, `tune --scenario`, the
// built-in scenario, `diagnose` reading back what it writes): the file fills the flags not given,
// the flags are resolved, then the file's measurements, title and notes go into the result.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scenario/resolve.h"

namespace specsim {

/// A scenario file as read: JSON, or YAML (by its extension) read into the same form.
struct ScenarioFile {
  std::string path;  ///< names the file in errors; empty: no file
  nlohmann::json doc;
};

/// Reads the scenario file at `path` (JSON, or YAML when it ends in .yaml or .yml); an empty path
/// reads nothing. InputError naming the file when it cannot be read.
ScenarioFile read_scenario_file(const std::string& path);

/// What a run resolves from beside its flags and its scenario file.
struct ScenarioExtras {
  std::optional<std::vector<std::string>> sglang_command;  ///< a pasted SGLang or vLLM launch command, split
  std::string sglang_where;                                ///< the flag that gave it (errors name it)
  std::vector<std::string> notes;                          ///< after the scenario's own (measurement files)
};

/// The scenario of `args` under `file`: the file fills every flag `args` lacks, then the SGLang
/// command fills what is still missing; the scenario is resolved, the command's and `extras`'
/// notes follow its own, and the file's measurements (first), title and notes are put in. `args`
/// is left filled, as resolved.
Scenario load_scenario(const ScenarioFile& file, RunArgs& args, const ScenarioExtras& extras = {});

/// load_scenario of the file at `path` (JSON or YAML).
Scenario load_scenario(const std::string& path, RunArgs& args);

}  // namespace specsim
