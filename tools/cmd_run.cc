// `specsim [run]`: the analytic cycle report for one scenario (the built-in one by default).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "engine/result_checks.h"
#include "report/report.h"
#include "run_trace.h"
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
  return guarded(app, argc, argv, [&] {
    check_outputs({{trace.trace, "--trace"}, {trace.csv, "--csv"}},
                  {args.model_path.value_or(""), args.hardware.value_or(""), trace.accept_from, trace.baseline_from,
                   trace.anchor_trace});
    const auto file_notes = apply_measurement_files(trace, args);
    Scenario s = resolve_scenario(args);
    s.notes.insert(s.notes.end(), file_notes.begin(), file_notes.end());
    const ScenarioResult r = run_scenario(s);
    check_result_figures(s, r);
    auto j = report_json(s, r);
    require_finite_json(j, "the scenario's inputs");
    const TraceOutcome cycles = run_trace_outputs(trace, s, r);  // files first: nothing printed if they fail
    add_cycles_json(j, cycles);
    require_finite_json(j, "--accept-from, --cycles");
    if (json) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << report_text(s, r) << cycles_text(cycles);
    }
    return kExitOk;
  });
}

}  // namespace specsim::cli
