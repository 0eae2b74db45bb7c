#include "timeline/replay_outputs.h"

#include "replay_report/replay_report.h"
#include "timeline/replay_trace.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim {

void check_replay_outputs(const ReplayOutputFiles& f, const RunArgs& args) {
  check_outputs({{f.out_path, "-o"}, {f.trace_path, "--trace"}, {f.csv_path, "--csv"}},
                {args.model_path.value_or(""), args.hardware.value_or("")});
}

std::string replay_outputs(const Scenario& s, const ScenarioResult& r, const ReplayMeasurement& m,
                           const ReplayOutputFiles& f) {
  const nlohmann::json report = replay_json(s, r, m);
  if (!f.out_path.empty()) write_file_atomic(f.out_path, dump_json(report) + "\n", "-o");
  write_replay_trace_files(report, "replay report", f.trace_path, f.csv_path);
  return f.json ? dump_json(report) + "\n" : replay_text(report);
}

}  // namespace specsim
