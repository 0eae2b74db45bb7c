// `specsim [run]`: the analytic cycle report for one scenario (the built-in one by default).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "evaluate/result_checks.h"
#include "report/report.h"
#include "run_trace.h"
#include "explain/explain.h"
#include "scenario/scenario_file.h"
#include "scenario/sglang_cmdline.h"
#include "scenario/yaml_file.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::cli {

int cmd_run(int argc, char** argv) {
  CLI::App app{"specsim run: predicted EAGLE-3 cycle cost and tok/s against plain decoding"};
  app.name("specsim run");
  RunArgs args;
  bool json = false;
  TraceArgs trace;
  add_run_flags(app, args);
  add_trace_flags(app, trace);
  app.add_flag("--json", json, "print the report as one JSON object");
  std::string scenario_file, save_scenario;
  app.add_option("--scenario", scenario_file,
                 "scenario file: JSON as --save-scenario writes it, or a flat YAML/JSON mapping of flags as SGLang's "
                 "--config (model-path: ..., tp-size: 8); flags override it");
  std::string sglang_args;
  std::vector<std::string> sglang_tokens;
  app.add_option("--sglang-args", sglang_args,
                 "an SGLang launch command as one string (\"python -m sglang.launch_server --model-path ... --tp 8\"); "
                 "flags given to specsim override it");
  app.add_option("sglang_command", sglang_tokens, "after --: an SGLang launch command, pasted as is");
  app.add_option("--save-scenario", save_scenario, "write the resolved scenario to FILE (JSON) for --scenario");
  return guarded(app, argc, argv, [&] {
    check_outputs({{trace.trace, "--trace"}, {trace.csv, "--csv"}, {save_scenario, "--save-scenario"}},
                  {args.model_path.value_or(""), args.hardware.value_or(""), trace.accept_from, trace.baseline_from,
                   trace.anchor_trace, scenario_file});
    const auto file_notes = apply_measurement_files(trace, args);
    const std::string given_model = args.model_path.value_or(""), given_draft = args.draft_model_path.value_or("");
    nlohmann::json file;
    if (!scenario_file.empty()) {
      file = is_yaml_path(scenario_file) ? read_yaml_file(scenario_file) : read_json_file(scenario_file);
      args_from_scenario_file(file, args, scenario_file);
    }
    std::vector<std::string> sglang_notes;
    if (!sglang_args.empty() || !sglang_tokens.empty()) {
      const auto tokens = !sglang_tokens.empty() ? sglang_tokens : split_command(sglang_args);
      const SglangCommand c = args_from_sglang(tokens, args, sglang_tokens.empty() ? "--sglang-args" : "-- COMMAND");
      for (const auto& n : c.notes) sglang_notes.push_back("SGLang command: " + n);
      if (!c.ignored.empty()) {
        std::string l;
        for (const auto& f : c.ignored) l += (l.empty() ? "" : ", ") + f;
        sglang_notes.push_back("SGLang command: ignored (they do not change the cycle): " + l);
      }
    }
    const ExplainedRun e = run_explained(args, [&](const RunArgs& a) {
      Scenario sc = resolve_scenario(a);
      check_accept_log_depth(trace, sc);
      sc.notes.insert(sc.notes.end(), sglang_notes.begin(), sglang_notes.end());
      sc.notes.insert(sc.notes.end(), file_notes.begin(), file_notes.end());
      if (!scenario_file.empty()) apply_scenario_file(file, sc, scenario_file);
      return sc;
    });
    const Scenario& s = e.scenario;
    const ScenarioResult& r = e.result;
    check_result_figures(s, r);
    auto j = report_json(s, r);
    if (e.explained) j["explanation"] = explanation_json(e);
    require_finite_json(j, "the scenario's inputs");
    const TraceOutcome cycles = run_trace_outputs(trace, s, r);  // files first: nothing printed if they fail
    add_cycles_json(j, cycles);
    require_finite_json(j, "--accept-from, --cycles");
    if (!save_scenario.empty()) {
      const std::string model = args.model_path.value_or(given_model.empty() ? s.target.name : given_model);
      write_file_atomic(save_scenario,
                        scenario_file_json(s, model, args.draft_model_path.value_or(given_draft)).dump(2) + "\n",
                        "--save-scenario");
    }
    if (json) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << report_text(s, r) << cycles_text(cycles);
    }
    return kExitOk;
  });
}

}  // namespace specsim::cli
