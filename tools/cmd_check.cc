// `specsim check --baseline BASELINE.json [run flags]`: reruns the scenario and compares every
// phase time and the tok/s with the baseline (`specsim run --json > BASELINE.json`).
// Exit 0: all within tolerance; 1: something regressed (a diff table says what); 2: bad input.
#include <fmt/format.h>

#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "report/report.h"
#include "sweep/check.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim::cli {

namespace {

// The GPU replay plugs in here: a MeasureFn that runs the scenario's CyclePlan on GPUs and
// returns a report JSON of the same shape as `specsim run --json`.
sweep::MeasureFn replay_measure() {
  throw InputError("--replay needs a specsim build with CUDA and a GPU", "--replay");
}

}  // namespace

int cmd_check(int argc, char** argv) {
  CLI::App app{"specsim check: rerun a scenario and compare it with a baseline from `specsim run --json`"};
  app.name("specsim check");
  RunArgs args;
  std::string baseline_path, tolerance_text = "3%";
  bool replay = false, allow_different = false;
  add_run_flags(app, args);
  app.add_option("--baseline", baseline_path, "baseline JSON written by `specsim run --json`")->required();
  app.add_option("--tolerance", tolerance_text, "allowed slowdown: a fraction (0.03) or a percentage (3%), default 3%");
  app.add_flag("--replay", replay, "measure on GPUs (the GPU replay) instead of the analytic engine");
  app.add_flag("--allow-different-settings", allow_different,
               "compare even when the rerun's model, hardware or settings differ from the baseline's");
  return guarded(app, argc, argv, [&] {
    const sweep::MeasureFn measure = replay ? replay_measure() : sweep::analytic_measure();
    const double tol = sweep::parse_tolerance(tolerance_text);
    const nlohmann::json base = read_json_file(baseline_path);
    sweep::validate_report(base, baseline_path);
    const nlohmann::json now = measure(resolve_scenario(args));

    const auto diffs = sweep::input_differences(base, now);
    if (!diffs.empty()) {
      std::string list;
      for (const auto& d : diffs) list += (list.empty() ? "" : "; ") + d;
      if (!allow_different)
        throw InputError("the rerun's inputs differ from the baseline's, so they are not compared: " + list +
                             " (give the baseline's flags, or --allow-different-settings)",
                         "--baseline");
      std::cerr << "note: comparing different inputs (--allow-different-settings): " << list << "\n";
    }
    const std::string bver = base["specsim_version"].get<std::string>();
    if (bver != kSpecsimVersion)
      fmt::print("baseline made with specsim {}, rerun with {}\n", bver, kSpecsimVersion);

    const auto rows = sweep::compare_reports(base, now, tol);
    size_t bad = 0;
    for (const auto& r : rows) bad += r.regressed;
    std::cout << sweep::check_table(rows);
    if (bad) {
      fmt::print("check: REGRESSED: {} of {} figures worse than the baseline by more than {:g}%\n", bad, rows.size(),
                 100 * tol);
      return kExitRegression;
    }
    fmt::print("check: ok: {} figures within {:g}% of the baseline\n", rows.size(), 100 * tol);
    return kExitOk;
  });
}

}  // namespace specsim::cli
