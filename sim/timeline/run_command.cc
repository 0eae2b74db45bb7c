#include "timeline/run_command.h"

#include "evaluate/result_checks.h"
#include "explain/explain.h"
#include "report/report.h"
#include "scenario/command_flags.h"
#include "scenario/load_scenario.h"
#include "scenario/scenario_file.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim {

std::string run_command(RunArgs& args, const RunRequest& q) {
  const MeasurementFiles& f = q.files;
  check_outputs({{q.cycles.trace, "--trace"}, {q.cycles.csv, "--csv"}, {q.save_scenario, "--save-scenario"}},
                {args.model_path.value_or(""), args.hardware.value_or(""), f.accept_from, f.baseline_from,
                 f.anchor_trace, q.scenario_file});
  const Measurements m = read_measurement_files(f, args);
  // The names as the user gave them, for --save-scenario (the scenario file may fill them).
  const std::string given_model = args.model_path.value_or(""), given_draft = args.draft_model_path.value_or("");
  const ScenarioFile file = read_scenario_file(q.scenario_file);
  ScenarioExtras extras;
  if (!q.sglang_tokens.empty() && !q.sglang_args.empty())
    throw InputError("a launch command both after -- and in --sglang-args: give it once", "--sglang-args");
  if (!q.sglang_tokens.empty())
    extras.sglang_command = q.sglang_tokens, extras.sglang_where = "-- COMMAND";
  else if (!q.sglang_args.empty())
    extras.sglang_command = split_command(q.sglang_args), extras.sglang_where = "--sglang-args";
  extras.notes = m.notes;
  // A run of a named model (no scenario file, built-in or given; no pasted command) takes the
  // draft shape and context its logs ran.
  if (q.scenario_file.empty() && !extras.sglang_command && args.model_path) {
    if (const std::string n = adopt_accept_log_shape(m, args); !n.empty()) extras.notes.push_back(n);
    if (const std::string n = adopt_baseline_log_context(m, args); !n.empty()) extras.notes.push_back(n);
  }
  const RunArgs given = args;
  Scenario as_given = load_scenario(file, args, extras);  // also fills args from the file and the command
  m.check(as_given);
  // Measurements that contradict each other under these settings: the simplest consistent
  // assumption among those the user left open is used and said (explain/).
  const ExplainedRun e = run_explained(std::move(as_given), given, args, [&](const RunArgs& a) {
    RunArgs filled = a;
    Scenario sc = load_scenario(file, filled, extras);
    m.check(sc);
    return sc;
  });
  Scenario s = e.scenario;
  for (const auto& w : m.mismatches(s)) s.notes.push_back(w);
  const ScenarioResult& r = e.result;
  check_result_figures(s, r);
  auto j = report_json(s, r);
  if (e.explained) j["explanation"] = explanation_json(e);
  require_finite_json(j, "the scenario's inputs");
  CycleRequest cq = q.cycles;
  if (m.accept_log) cq.accept_log = &*m.accept_log, cq.accept_file = m.accept_file;
  // Again, now that every file the run reads has been read (profiles a scenario file names, the
  // model of a pasted command, the runtime profile): none of them may be an output.
  check_outputs({{q.cycles.trace, "--trace"}, {q.cycles.csv, "--csv"}, {q.save_scenario, "--save-scenario"}});
  // The resolved scenario as --save-scenario writes it: also in --json, so a baseline made from it
  // reruns as made (`specsim check --baseline FILE` alone). Its paths must read back as they are:
  // checked before the trace or CSV is written.
  const std::string model = args.model_path.value_or(given_model.empty() ? s.target.name : given_model);
  const nlohmann::json scenario =
      scenario_file_json(s, model, args.draft_model_path.value_or(given_draft), args.runtime.value_or(""));
  if (!q.save_scenario.empty()) require_utf8_json(scenario, "--save-scenario");
  const CycleOutcome cycles = run_cycles(cq, s, r);  // files first: nothing printed if they fail
  add_cycles_json(j, cycles);
  require_finite_json(j, "--accept-from, --cycles");
  if (!q.save_scenario.empty()) write_file_atomic(q.save_scenario, dump_json(scenario) + "\n", "--save-scenario");
  if (!q.json) return report_text(s, r) + cycles_text(cycles);
  j["scenario_file"] = scenario;
  return dump_json(j) + "\n";
}

}  // namespace specsim
