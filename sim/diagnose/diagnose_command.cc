#include "diagnose/diagnose_command.h"

#include "diagnose/diagnose_report.h"
#include "diagnose/scenario_yaml.h"
#include "scenario/yaml_file.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::diagnose {

std::string diagnose_command(const DiagnoseInput& in, const std::string& out, bool as_json) {
  // A YAML scenario this build could not read back is refused, not written.
  if (is_yaml_path(out) && !yaml_supported())
    throw InputError("this build reads no YAML scenario files (built without libyaml-cpp-dev): write it as .json",
                     "-o");
  check_outputs({{out, "-o"}}, {in.log, in.baseline_log.value_or(""), in.trace.value_or(""), in.nccl_tests.value_or(""),
                                in.model.value_or(""), in.draft_model.value_or("")});
  const Diagnosis d = diagnose(in);
  if (!out.empty()) {
    const std::string text =
        is_yaml_path(out)
            ? to_yaml(d.scenario_file,
                      "specsim scenario written by `specsim diagnose` from the SGLang log " + in.log +
                          "\nedit it and run `specsim run --scenario FILE` or `specsim tune --scenario FILE`")
            : d.scenario_file.dump(2) + "\n";
    write_file_atomic(out, text, "-o");
  }
  if (as_json) return diagnosis_json(d, out).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return diagnosis_text(d, out);
}

}  // namespace specsim::diagnose
