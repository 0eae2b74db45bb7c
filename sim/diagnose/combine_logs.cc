#include "diagnose/combine_logs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "evaluate/evaluate_scenario.h"
#include "scenario/load_scenario.h"
#include "scenario/measured_run.h"
#include "util/error.h"

namespace specsim::diagnose {
namespace {

using nlohmann::json;

}  // namespace

json combined_scenario(const std::vector<Diagnosis>& ds, const std::vector<std::string>& logs) {
  json f = ds.front().scenario_file;
  json measured = json::array();
  int dropped = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const json& g = ds[i].scenario_file;
    if (g.value("model", "") != f.value("model", "") || g.value("hardware", "") != f.value("hardware", ""))
      throw InputError(
          fmt::format("{} is of {} on {}, {} of {} on {}: one deployment per diagnose", logs[i], g.value("model", "?"),
                      g.value("hardware", "?"), logs[0], f.value("model", "?"), f.value("hardware", "?")),
          "LOG");
    for (json m : g.value("measured", json::array())) {
      if (m.contains("baseline_tok_s") && implied_source(m["baseline_tok_s"].value("source", "")) &&
          m.contains("spec_tok_s")) {
        m.erase("baseline_tok_s");
        ++dropped;
      }
      m["origin"] = "diagnose " + logs[i];
      measured.push_back(m);
    }
  }
  f["measured"] = measured;
  f["notes"].push_back(fmt::format(
      "anchored to {} logs at their own settings ({}); {} baseline(s) they only implied left out: the cycle "
      "time the model does not explain is fitted over the settings",
      logs.size(), fmt::join(logs, ", "), dropped));
  // Resolve and evaluate it now: a contradiction between the logs is refused here, with no file.
  RunArgs args;
  Scenario s = load_scenario(ScenarioFile{"the combined scenario of " + logs[0], f}, args);
  run_scenario(s);
  return f;
}

std::string combined_text(const std::vector<Diagnosis>& ds, const std::vector<std::string>& logs,
                          const json& scenario) {
  std::string out = "\ncombined with the other logs:\n";
  for (std::size_t i = 1; i < ds.size(); ++i) {
    const json& st = ds[i].scenario_file["settings"];
    out += fmt::format("  {}: steps {}, topk {}, {} draft tokens, bs {}, accept len {:.2f}\n", logs[i],
                       st.value("speculative_num_steps", 0), st.value("speculative_eagle_topk", 0),
                       st.value("speculative_num_draft_tokens", 0), st.value("batch_size", 0),
                       st.value("accept_len", 0.0));
  }
  out += fmt::format("  the scenario holds {} measurements of {} logs (each log's own settings)\n",
                     scenario["measured"].size(), logs.size());
  return out;
}

}  // namespace specsim::diagnose
