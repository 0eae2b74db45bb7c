#include "calibrate/fit_profile_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "calibrate/profile_io.h"

namespace specsim {
using nlohmann::json;

namespace {

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// `{"value": v, "source": s}`: how a profile holds a number with its source.
json sourced(double value, const std::string& source) { return {{"value", value}, {"source", source}}; }

}  // namespace

void write_compute_fit(json& profile, const GpuProfile& fitted, const ReplayFit& fit,
                       const std::vector<std::string>& from, const std::string& device,
                       const std::string& hardware_spec) {
  std::string files;
  for (const auto& f : from) {
    if (!files.empty()) files += ' ';
    files += file_name(f);
  }
  const std::string source = fmt::format(
      "measured: specsim calibrate --from {} on {} ({}): least squares over {} graph phases and {} op timings of "
      "specsim replay, base {}",
      files, device, utc_date_today(), fit.phases, fit.ops, hardware_spec);
  for (const auto& [key, value] : compute_fit_fields(fitted)) profile["gpu"][key] = sourced(value, source);
  profile["gpu"]["description"] = profile["gpu"].value("description", "") + " | compute calibrated from specsim replay";
  profile["calibration"] = {{"mode", "replay"},
                            {"from", from},
                            {"base", hardware_spec},
                            {"date", utc_date_today()},
                            {"clamped", fit.clamped}};
}

std::string allreduce_fit_source_head(const std::vector<AllReducePoint>& pts) {
  std::vector<std::string> files, devices;
  for (const auto& p : pts) {
    if (std::find(files.begin(), files.end(), file_name(p.file)) == files.end()) files.push_back(file_name(p.file));
    if (std::find(devices.begin(), devices.end(), p.device) == devices.end()) devices.push_back(p.device);
  }
  return fmt::format(
      "measured: specsim calibrate --from {} on {} ({}): weighted least squares over {} all-reduce-only CUDA graphs "
      "of specsim replay",
      fmt::join(files, " "), fmt::join(devices, "; "), utc_date_today(), pts.size());
}

void write_nccl_allreduce_fit(json& profile, AllReduceFit& f, const std::string& head,
                              const std::string& hardware_spec) {
  f.topo.nccl_fit->source = fmt::format(
      "{} ({} calls, {:.0f}..{:.0f} B, world {}; time = lat + bytes/algbw per call "
      "and a fixed cost per graph), base {}",
      head, f.calls, f.min_bytes, f.max_bytes, f.world, hardware_spec);
  profile["topology"]["nccl_fit"] = nccl_fit_json(*f.topo.nccl_fit);
}

void write_custom_allreduce_fit(json& profile, const AllReduceFit& f, const std::string& head,
                                const std::string& hardware_spec) {
  std::set<int> worlds;
  for (const auto& p : f.points) worlds.insert(p.world);
  const std::string src =
      fmt::format("{} ({} calls, {:.0f}..{:.0f} B, world {}, backend {}), base {}", head, f.calls, f.min_bytes,
                  f.max_bytes, fmt::join(worlds, "/"), f.points.front().backend.label(), hardware_spec);
  for (const auto& v : f.values)
    if (!v.held) profile["topology"][v.name] = sourced(v.after, src);
}

void write_allreduce_summary(json& profile, const std::vector<AllReduceFit>& fits) {
  json summary = json::array();
  for (const auto& f : fits)
    summary.push_back({{"backend", f.kind == AllReduceChoice::Kind::Nccl ? "nccl" : "custom"},
                       {"world", f.world},
                       {"graphs", f.graphs},
                       {"graph_fixed_us", f.graph_us},
                       {"worst_error_pct_before", f.worst_before_pct},
                       {"worst_error_pct_after", f.worst_after_pct},
                       {"notes", f.notes}});
  json& topo = profile["topology"];
  // A malformed description of the base is replaced, not a JSON type error.
  const std::string desc =
      topo.contains("description") && topo["description"].is_string() ? topo["description"].get<std::string>() : "";
  topo["description"] = desc + " | all-reduce calibrated from specsim replay";
  profile["calibration"]["allreduce"] = summary;
}

}  // namespace specsim
