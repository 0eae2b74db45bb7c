#include "scenario/load_scenario.h"

#include <algorithm>

#include "scenario/pasted_command.h"
#include "scenario/resolve.h"
#include "scenario/scenario_file.h"
#include "scenario/yaml_file.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

ScenarioFile read_scenario_file(const std::string& path) {
  if (path.empty()) return {};
  return {path, is_yaml_path(path) ? read_yaml_file(path) : read_json_file(path)};
}

namespace {

bool holds_note(const std::vector<std::string>& v, const std::string& n) {
  return std::find(v.begin(), v.end(), n) != v.end();
}

// The notes the file's own settings derive: the run that saved it wrote them, and a run that
// changes a setting derives its own in their place. Empty where the file alone does not resolve
// (the command line gives what it lacks): then every note of the file is kept.
std::vector<std::string> notes_the_file_derives(const ScenarioFile& file) {
  try {
    RunArgs alone;
    args_from_scenario_file(file.doc, alone, file.path);
    return resolve_scenario(alone).notes;
  } catch (const std::exception&) {
    return {};
  }
}

// Drops the file's notes that its settings derive and this run's do not (a note of the saved run's
// settings, not of this one's). The rest stay: notes written by hand, and notes on how the file's
// own values were chosen (a pasted command's model, SGLang's choice of a draft shape), which its
// settings hold as plain values and so do not derive again.
void drop_stale_file_notes(const ScenarioFile& file, std::vector<std::string>& notes,
                           const std::vector<std::string>& this_run) {
  const bool all_derived_again =
      std::all_of(notes.begin(), notes.end(), [&](const std::string& n) { return holds_note(this_run, n); });
  if (all_derived_again) return;  // the common case: nothing to tell apart, no second resolve
  const std::vector<std::string> file_derived = notes_the_file_derives(file);
  std::erase_if(notes, [&](const std::string& n) { return holds_note(file_derived, n) && !holds_note(this_run, n); });
}

}  // namespace

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
  // The file's own notes are put first: a note the file already holds is not repeated, and one its
  // settings derived that this run's do not is dropped.
  if (!file.path.empty()) {
    const std::vector<std::string> this_run = s.notes;
    apply_scenario_file(file.doc, s, file.path);
    drop_stale_file_notes(file, s.notes, this_run);
  }
  return s;
}

Scenario load_scenario(const std::string& path, RunArgs& args) { return load_scenario(read_scenario_file(path), args); }

}  // namespace specsim
