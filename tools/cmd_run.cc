// `specsim [run]`: the analytic cycle report for one scenario (the built-in one by default).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "report/report.h"

namespace specsim::cli {

int cmd_run(int argc, char** argv) {
  CLI::App app{"specsim run: predicted EAGLE-3 cycle cost and tok/s against plain decoding"};
  app.name("specsim run");
  RunArgs args;
  bool json = false;
  add_run_flags(app, args);
  app.add_flag("--json", json, "print the report as one JSON object");
  return guarded(app, argc, argv, [&] {
    const Scenario s = resolve_scenario(args);
    const ScenarioResult r = run_scenario(s);
    if (json) std::cout << report_json(s, r).dump(2) << "\n";
    else std::cout << report_text(s, r);
    return kExitOk;
  });
}

}  // namespace specsim::cli
