#include "validate/case_report.h"

#include <optional>
#include <utility>

#include "evaluate/evaluate_scenario.h"
#include "evaluate/result_checks.h"
#include "report/report.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

std::string case_report(const CaseOutcome& o, bool json) {
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
    return dump_json(j) + "\n";
  }
  std::string text = case_text(o) + "\n";
  if (replay)
    text += report_text(replay->first, replay->second);
  else if (o.run)
    text += why_not + "\n";
  return text;
}

}  // namespace specsim
