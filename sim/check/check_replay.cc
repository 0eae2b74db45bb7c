#include "check/check_replay.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "util/error.h"
#include "util/json_io.h"

namespace specsim::check {
using nlohmann::json;

BaselineKind baseline_kind(const json& j) {
  if (!j.is_object()) return BaselineKind::Unknown;
  if (j.value("kind", "") == "specsim-replay") return BaselineKind::Replay;
  if (j.contains("scenarios")) return BaselineKind::Analytic;
  return BaselineKind::Unknown;
}

void require_baseline_kind(const json& j, bool replay, const std::string& where) {
  const BaselineKind k = baseline_kind(j);
  if (replay && k == BaselineKind::Analytic)
    throw InputError(
        "--replay compares measured phase times with a measured baseline, and this is an analytic "
        "`specsim run --json` report: make the baseline with `specsim replay -o FILE` (same flags), "
        "or drop --replay to compare predictions",
        where);
  if (!replay && k == BaselineKind::Replay)
    throw InputError(
        "this baseline is a `specsim replay` report (measured times): add --replay to compare "
        "measured with measured, or make an analytic baseline with `specsim run --json`",
        where);
}

void validate_replay_report(const json& j, const std::string& where) {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw InputError("not a `specsim replay` report: " + what, where);
  };
  need(j.is_object() && j.value("kind", "") == "specsim-replay", "expected \"kind\": \"specsim-replay\"");
  need(j.contains("specsim_version") && j["specsim_version"].is_string(), "no specsim_version");
  need(j.contains("scenario") && j["scenario"].is_object(), "no scenario");
  need(j.contains("phases") && j["phases"].is_array() && !j["phases"].empty(), "no phases");
  for (const auto& p : j["phases"]) {
    need(p.is_object() && p.contains("phase") && p["phase"].is_string(), "a phase without a name");
    need(p.contains("measured") && p["measured"].is_object() && p["measured"].contains("us") &&
             p["measured"]["us"].is_number() && p["measured"]["us"].get<double>() > 0,
         "phase " + json_excerpt(p["phase"]) + " has no positive measured.us");
  }
}

std::vector<std::string> replay_input_differences(const json& base, const json& now) {
  std::vector<std::string> out;
  auto show = [](const json& v) { return v.is_null() ? std::string("none") : json_excerpt(v); };
  auto diff = [&](const json& b, const json& n, const std::string& name) {
    if (b != n) out.push_back(fmt::format("{}: baseline {}, now {}", name, show(b), show(n)));
  };
  const json& bs = base["scenario"];
  const json& ns = now["scenario"];
  for (const char* k : {"model", "draft", "hardware", "tp", "batch", "context_len", "speculative", "num_steps",
                        "num_draft_tokens", "dtype"})
    diff(bs.value(k, json(nullptr)), ns.value(k, json(nullptr)), std::string("scenario/") + k);
  // Measured times belong to the GPU they were taken on.
  diff(base.value("device", json(nullptr)), now.value("device", json(nullptr)), "device");
  diff(base.value("rank_share", json(nullptr)), now.value("rank_share", json(nullptr)), "rank_share");
  // One rank's share (collectives left out) is not comparable with a multi-GPU replay's times.
  diff(base.value("collectives", json(nullptr)), now.value("collectives", json(nullptr)), "collectives");
  return out;
}

namespace {
const json* find_phase(const json& phases, const std::string& name) {
  for (const auto& p : phases)
    if (p.is_object() && p.value("phase", "") == name) return &p;
  return nullptr;
}
}  // namespace

std::vector<CheckRow> compare_replay_reports(const json& base, const json& now, double tol) {
  std::vector<CheckRow> rows;
  for (const auto& bp : base["phases"]) {
    const std::string name = bp["phase"].get<std::string>();
    const double b = bp["measured"]["us"].get<double>();
    const json* np = find_phase(now["phases"], name);
    if (!np) {
      rows.push_back({"replay", name + " us", b, 0, -1, "MISSING", true, false});
      continue;
    }
    const double n = (*np)["measured"]["us"].get<double>();
    CheckRow r{"replay", name + " us", b, n, (n - b) / b, "ok", false};
    if (r.delta > tol)
      r.status = "REGRESSED", r.regressed = true;
    else if (r.delta < -tol)
      r.status = "faster";
    rows.push_back(r);
  }
  return rows;
}

}  // namespace specsim::check
