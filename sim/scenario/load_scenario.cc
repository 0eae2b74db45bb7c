#include "scenario/load_scenario.h"

#include "scenario/pasted_command.h"
#include "scenario/scenario_file.h"
#include "scenario/yaml_file.h"
#include "util/json_io.h"

namespace specsim {

ScenarioFile read_scenario_file(const std::string& path) {
  if (path.empty()) return {};
  return {path, is_yaml_path(path) ? read_yaml_file(path) : read_json_file(path)};
}

Scenario load_scenario(const ScenarioFile& file, RunArgs& args, const ScenarioExtras& extras) {
  if (!file.path.empty()) args_from_scenario_file(file.doc, args, file.path);
  std::vector<std::string> notes;
  PastedCommand pasted;
  if (extras.sglang_command) {
    pasted = args_from_command(*extras.sglang_command, args, extras.sglang_where);
    for (const auto& n : pasted.notes) notes.push_back(pasted.stack + " command: " + n);
  }
  notes.insert(notes.end(), extras.notes.begin(), extras.notes.end());
  Scenario s = resolve_scenario(args);
  s.pasted_stack = pasted.stack;
  s.pasted_flags = pasted.rows;
  s.notes.insert(s.notes.end(), notes.begin(), notes.end());
  // Before the file's own notes are put first: a note the file already holds is not repeated.
  if (!file.path.empty()) apply_scenario_file(file.doc, s, file.path);
  return s;
}

Scenario load_scenario(const std::string& path, RunArgs& args) { return load_scenario(read_scenario_file(path), args); }

}  // namespace specsim
