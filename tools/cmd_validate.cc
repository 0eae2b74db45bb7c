// `specsim validate`: the published measurements (traces/published/) against unanchored predictions.
#include <iostream>
#include <optional>
#include <utility>

#include "cli_common.h"
#include "commands.h"
#include "evaluate/evaluate_scenario.h"
#include "evaluate/result_checks.h"
#include "report/report.h"
#include "scenario/paths.h"
#include "validate/nccl_check.h"
#include "validate/transfer.h"
#include "validate/validate.h"

namespace specsim::cli {

namespace {

// `validate --case ID`: the case in words and, when it can be run, the whole report of its `specsim run`.
int show_case(const CaseOutcome& o, bool json) {
  std::string why_not = o.skipped;  // no run: the case states too little
  std::optional<std::pair<Scenario, ScenarioResult>> replay;
  if (o.run) {
    try {
      Scenario s = resolve_scenario(o.run->args);
      ScenarioResult sr = run_scenario(s);
      check_result_figures(s, sr);
      replay.emplace(std::move(s), std::move(sr));
    } catch (const InputError& e) {  // what the source ran is outside the model: said, as the table says it
      why_not = "run refuses it: " + e.line();
    }
  }
  if (json) {
    nlohmann::json j{{"case", case_json(o)},
                     {"report", replay ? report_json(replay->first, replay->second) : nullptr},
                     {"not_run", replay ? nlohmann::json(nullptr) : nlohmann::json(why_not)}};
    require_finite_json(j, "the case's settings");
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << case_text(o) << "\n";
  if (replay)
    std::cout << report_text(replay->first, replay->second);
  else if (o.run)
    std::cout << why_not << "\n";
  return kExitOk;
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  CLI::App app{"specsim validate: published speculative-decoding measurements against unanchored predictions"};
  app.name("specsim validate");
  std::string set;
  bool json = false, nccl = false, transfer = false;
  std::string nccl_dir;
  app.add_option("--set", set, "folder of case files (default: the repo's traces/published/)");
  app.add_flag("--nccl", nccl, "instead: the NCCL model against the nccl-tests logs (8 KB - 1 MB)");
  app.add_option("--nccl-logs", nccl_dir, "folder with index.json and the logs (default: traces/nccl-tests/)");
  app.add_flag("--json", json, "print the result as one JSON object");
  std::string case_id;
  app.add_option("--case", case_id,
                 "one case: its row, its assumptions, the `specsim run` command that replays it and that run's report")
      ->excludes("--nccl");
  app.add_flag("--transfer", transfer,
               "instead: each family of rows (one source and deployment) predicted from its anchor row's measurements "
               "(with --case: that case's family)")
      ->excludes("--nccl");
  return guarded(app, argc, argv, [&] {
    if (nccl) {
      if (nccl_dir.empty()) nccl_dir = models_dir() + "/../traces/nccl-tests";
      const auto logs = run_nccl_check(nccl_dir, 8 * 1024, 1024 * 1024);
      if (json)
        std::cout << nccl_check_json(logs).dump(2) << "\n";
      else
        std::cout << nccl_check_text(logs);
      return kExitOk;
    }
    const bool builtin = set.empty();
    if (builtin) set = models_dir() + "/../traces/published";
    const std::string label = builtin ? "traces/published" : set;
    if (transfer) {
      const TransferResult t = run_transfer(set, label, case_id);
      std::cout << (json ? transfer_json(t).dump(2) + "\n" : transfer_text(t));
      return kExitOk;
    }
    if (!case_id.empty()) return show_case(validate_case(set, case_id, label), json);
    const ValidateResult r = run_validate(set, label);
    if (json)
      std::cout << validate_json(r).dump(2) << "\n";
    else
      std::cout << validate_text(r);
    return kExitOk;
  });
}

}  // namespace specsim::cli
