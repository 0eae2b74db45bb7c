#include "diagnose/diagnose_command.h"

#include "diagnose/combine_logs.h"
#include "diagnose/diagnose_report.h"
#include "diagnose/scenario_yaml.h"
#include "ingest/server_log.h"
#include "scenario/yaml_file.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"
#include "util/utf8.h"

namespace specsim::diagnose {

std::string diagnose_command(const DiagnoseInput& in, const std::string& out, bool as_json,
                             const std::vector<std::string>& more_logs) {
  // A YAML scenario this build could not read back is refused, not written.
  if (is_yaml_path(out) && !yaml_supported())
    throw InputError("this build reads no YAML scenario files (built without libyaml-cpp-dev): write it as .json",
                     "-o");
  std::vector<std::string> inputs = {in.log,
                                     in.baseline_log.value_or(""),
                                     in.trace.value_or(""),
                                     in.nccl_tests.value_or(""),
                                     in.model.value_or(""),
                                     in.draft_model.value_or("")};
  inputs.insert(inputs.end(), more_logs.begin(), more_logs.end());
  check_outputs({{out, "-o"}}, inputs);
  Diagnosis d = diagnose(in);
  std::vector<Diagnosis> all = {d};
  std::vector<std::string> logs = {in.log};
  for (const auto& log : more_logs) {
    DiagnoseInput more = in;
    more.log = log;
    all.push_back(diagnose(more));
    logs.push_back(log);
  }
  std::string combined;
  if (!more_logs.empty()) {
    d.scenario_file = combined_scenario(all, logs);
    combined = combined_text(all, logs, d.scenario_file);
  }
  if (!out.empty()) {
    require_utf8_json(d.scenario_file, "-o");  // the scenario must read back as it is
    const std::string text =
        is_yaml_path(out)
            ? to_yaml(d.scenario_file,
                      "specsim scenario written by `specsim diagnose` from the " + ingest::engine_name(d.log.stack) +
                          " log " + escape_non_utf8(in.log) +
                          "\nedit it and run `specsim run --scenario FILE` or `specsim tune --scenario FILE`")
            : dump_json(d.scenario_file) + "\n";
    write_file_atomic(out, text, "-o");
  }
  if (as_json) {
    nlohmann::json j = diagnosis_json(d, out);
    if (!more_logs.empty()) {
      nlohmann::json others = nlohmann::json::array();
      for (std::size_t i = 1; i < all.size(); ++i) others.push_back(diagnosis_json(all[i], ""));
      j["more_logs"] = others;
    }
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return diagnosis_text(d, out) + combined;
}

}  // namespace specsim::diagnose
