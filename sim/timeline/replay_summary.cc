#include "timeline/replay_summary.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "timeline/replay_trace.h"
#include "util/json_io.h"

namespace specsim {

using nlohmann::json;

std::string replay_report_summary(const std::string& file, const std::string& trace_path, const std::string& csv_path,
                                  bool as_json) {
  const json report = read_json_file(file);
  const ReplayTrace t = replay_trace_from_report(report, file);
  write_replay_trace_files(report, file, trace_path, csv_path);
  if (as_json) {
    json phases = json::array();
    for (const auto& p : t.phases)
      phases.push_back({{"phase", p.name},
                        {"graph", p.graph},
                        {"calls", p.events.size()},
                        {"measured_us", p.measured_us},
                        {"events_us", p.event_sum_us},
                        {"scale", p.scale},
                        {"predicted_us", p.predicted_us}});
    json out = {{"file", file}, {"model", t.model}, {"device", t.device}, {"op_calls", t.events()}, {"phases", phases}};
    if (!trace_path.empty()) out["wrote_trace"] = trace_path;
    if (!csv_path.empty()) out["wrote_csv"] = csv_path;
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  std::string text;
  text += fmt::format("replay report {}: {} on {}, {} op calls\n", file, t.model, t.device, t.events());
  text += fmt::format("  {:<16} {:>5} {:>6} {:>12} {:>12} {:>8} {:>12}\n", "phase", "mode", "calls", "measured_us",
                      "events_us", "scale", "predicted_us");
  for (const auto& p : t.phases)
    text += fmt::format("  {:<16} {:>5} {:>6} {:>12.1f} {:>12.1f} {:>8.4f} {:>12.1f}\n", p.name,
                        p.graph ? "graph" : "eager", p.events.size(), p.measured_us, p.event_sum_us, p.scale,
                        p.predicted_us);
  if (!trace_path.empty()) text += fmt::format("wrote {}\n", trace_path);
  if (!csv_path.empty()) text += fmt::format("wrote {}\n", csv_path);
  return text;
}

}  // namespace specsim
