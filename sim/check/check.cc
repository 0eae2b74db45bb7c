#include "check/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "evaluate/result_checks.h"
#include "report/report.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim::check {
using nlohmann::json;

MeasureFn analytic_measure() {
  return [](const Scenario& s) {
    const ScenarioResult r = run_scenario(s);
    check_result_figures(s, r);
    return report_json(s, r);
  };
}

double parse_tolerance(const std::string& text) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  double v = 0;
  size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != t.size() || !std::isfinite(v))
    throw InputError("tolerance '" + text + "' is not a number: write a fraction (0.03) or a percentage (3%)",
                     "--tolerance");
  if (percent) v /= 100;
  if (v < 0 || v >= 1)
    throw InputError("tolerance '" + text + "' must be a fraction in [0, 1) (0.03) or a percentage (3%)",
                     "--tolerance");
  return v;
}

namespace {
bool positive_number(const json& v) { return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0; }
}  // namespace

void validate_report(const json& j, const std::string& where) {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw InputError("not a `specsim run --json` report: " + what, where);
  };
  need(j.is_object(), "expected a JSON object");
  need(j.contains("specsim_version") && j["specsim_version"].is_string(), "no specsim_version");
  // The report layout is that of a release line (major.minor): another line's baseline is not compared.
  const auto line = [](const std::string& v) { return v.substr(0, v.rfind('.')); };
  const std::string bver = j["specsim_version"].get<std::string>();
  if (line(bver) != line(kSpecsimVersion))
    throw InputError("baseline written by specsim " + json_excerpt(bver) + ", whose report layout differs from " +
                         kSpecsimVersion + "'s: regenerate it with `specsim run --json`",
                     where + ": specsim_version");
  need(j.contains("model") && j["model"].is_object() && j["model"].contains("name") && j["model"]["name"].is_string(),
       "no model.name");
  need(j.contains("hardware") && j["hardware"].is_object(), "no hardware");
  need(j.contains("settings") && j["settings"].is_object(), "no settings");
  need(j.contains("scenarios") && j["scenarios"].is_array() && !j["scenarios"].empty(), "no scenarios");
  for (const auto& s : j["scenarios"]) {
    need(s.is_object() && s.contains("label") && s["label"].is_string(), "a scenario without a label");
    if (s.contains("refused")) continue;
    const std::string label = json_excerpt(s["label"]);
    need(s.contains("phases") && s["phases"].is_array() && !s["phases"].empty(),
         "scenario " + label + " has no phases");
    for (const auto& p : s["phases"]) {
      need(p.is_object() && p.contains("name") && p["name"].is_string() && p.contains("us") && p["us"].is_number(),
           "a phase of scenario " + label + " lacks name or us");
      need(positive_number(p["us"]), "phase " + json_excerpt(p["name"]) + " of scenario " + label +
                                         " has a time that is not a positive number: " + json_excerpt(p["us"]));
    }
    need(s.contains("baseline") && s["baseline"].is_object() && s["baseline"].contains("tok_per_s") &&
             positive_number(s["baseline"]["tok_per_s"]),
         "scenario " + label + " has no positive baseline.tok_per_s");
    if (s.contains("spec"))
      need(s["spec"].is_object() && s["spec"].contains("tok_per_s") && positive_number(s["spec"]["tok_per_s"]),
           "scenario " + label + " has no positive spec.tok_per_s");
  }
}

namespace {

std::string show(const json& v) { return v.is_null() ? "none" : json_excerpt(v); }

void diff_field(const json& b, const json& n, const std::string& path, std::vector<std::string>& out) {
  if (b != n) out.push_back(fmt::format("{}: baseline {}, now {}", path, show(b), show(n)));
}

json at(const json& j, const json::json_pointer& p) { return j.contains(p) ? j[p] : json(nullptr); }

}  // namespace

std::vector<std::string> input_differences(const json& base, const json& now) {
  std::vector<std::string> out;
  for (const char* p :
       {"/model/name", "/model/weight_dtype", "/model/draft/name", "/hardware/spec", "/hardware/gpu",
        "/hardware/topology", "/hardware/num_gpus", "/hardware/num_nodes", "/hardware/link", "/hardware/nccl_path"})
    diff_field(at(base, json::json_pointer(p)), at(now, json::json_pointer(p)), std::string(p).substr(1), out);
  // Settings are inputs, except what the engine derives: the accept len when implied or projected
  // from measurements, the anchors beyond the measured numbers themselves, and what follows from
  // the model, GPU and flags compared elsewhere (the attention path, the runtime profile's range).
  const json& bs = base["settings"];
  const json& ns = now["settings"];
  std::set<std::string> keys;
  for (const auto& [k, v] : bs.items()) keys.insert(k);
  for (const auto& [k, v] : ns.items()) keys.insert(k);
  for (const auto& k : keys) {
    if (k == "anchors" || k == "accept_len" || k == "accept_rate" || k == "accept_len_source" ||
        k == "tree_attention_backend" || k == "verify_custom_mask" || k == "runtime_applies_to")
      continue;
    // reports from before the profile was named in them have none: compared where both have one
    if (k == "runtime_profile" && (!bs.contains(k) || !ns.contains(k))) continue;
    diff_field(bs.value(k, json(nullptr)), ns.value(k, json(nullptr)), "settings/" + k, out);
  }
  const std::string bsrc = bs.value("accept_len_source", ""), nsrc = ns.value("accept_len_source", "");
  const bool given = bsrc.rfind("given", 0) == 0 || nsrc.rfind("given", 0) == 0;
  const bool projected = bsrc.rfind("projected", 0) == 0 && nsrc.rfind("projected", 0) == 0;
  if (!projected)
    diff_field(bs.value("accept_len_source", json(nullptr)), ns.value("accept_len_source", json(nullptr)),
               "settings/accept_len_source", out);
  if (given)
    diff_field(bs.value("accept_len", json(nullptr)), ns.value("accept_len", json(nullptr)), "settings/accept_len",
               out);
  auto measured = [](const json& s) {  // each anchor's kind, origin and value, in order
    json l = json::array();
    if (s.contains("anchors") && s["anchors"].is_array())
      for (const auto& a : s["anchors"])
        if (a.is_object()) l.push_back({a.value("kind", ""), a.value("origin", ""), a.value("measured", 0.0)});
    return l;
  };
  diff_field(measured(bs), measured(ns), "settings/anchors (kind, origin, measured)", out);
  json bl = json::array(), nl = json::array();
  for (const auto& s : base["scenarios"]) bl.push_back(s.value("label", ""));
  for (const auto& s : now["scenarios"]) nl.push_back(s.value("label", ""));
  diff_field(bl, nl, "scenarios (all-reduce backends)", out);
  return out;
}

namespace {

CheckRow figure(const std::string& sc, const std::string& name, double b, double n, bool higher_is_worse, double tol) {
  CheckRow r{sc, name, b, n, 0, "ok", false};
  r.delta = b != 0 ? (n - b) / b : (n == 0 ? 0 : INFINITY);
  const double worse = higher_is_worse ? r.delta : -r.delta;
  if (worse > tol)
    r.status = "REGRESSED", r.regressed = true;
  else if (worse < -tol)
    r.status = higher_is_worse ? "faster" : "better";
  return r;
}

const json* find_by(const json& arr, const char* key, const std::string& value) {
  for (const auto& e : arr)
    if (e.is_object() && e.value(key, "") == value) return &e;
  return nullptr;
}

}  // namespace

std::vector<CheckRow> compare_reports(const json& base, const json& now, double tol) {
  std::vector<CheckRow> rows;
  for (const auto& bs : base["scenarios"]) {
    const std::string label = bs.value("label", "");
    const json* ns = find_by(now["scenarios"], "label", label);
    const bool b_refused = bs.contains("refused"), n_refused = ns && ns->contains("refused");
    if (!ns || (n_refused && !b_refused)) {
      CheckRow r{label, "scenario", 0, 0, 0, ns ? "REGRESSED" : "MISSING", true, false};
      r.figure = ns ? "now refused: " + (*ns)["refused"].get<std::string>() : "scenario missing in the rerun";
      rows.push_back(r);
      continue;
    }
    if (b_refused) {
      rows.push_back({label, n_refused ? "refused in both" : "refused in the baseline, runs now", 0, 0, 0,
                      n_refused ? "ok" : "better", false, false});
      continue;
    }
    rows.push_back(figure(label, "baseline tok/s", bs["baseline"]["tok_per_s"].get<double>(),
                          (*ns)["baseline"]["tok_per_s"].get<double>(), false, tol));
    if (bs.contains("spec") && bs["spec"].is_object()) {
      if (!(*ns).contains("spec") || !(*ns)["spec"].is_object())
        rows.push_back({label, "spec tok/s", bs["spec"]["tok_per_s"].get<double>(), 0, -1, "MISSING", true, false});
      else
        rows.push_back(figure(label, "spec tok/s", bs["spec"]["tok_per_s"].get<double>(),
                              (*ns)["spec"]["tok_per_s"].get<double>(), false, tol));
    }
    if (bs.contains("spec") && bs["spec"].is_object() && ns->contains("spec") && (*ns)["spec"].is_object())
      rows.push_back(figure(label, "cycle us", bs["spec"]["cycle_us"].get<double>(),
                            (*ns)["spec"]["cycle_us"].get<double>(), true, tol));
    rows.push_back(figure(label, "baseline step us", bs["baseline"]["step_us"].get<double>(),
                          (*ns)["baseline"]["step_us"].get<double>(), true, tol));
    for (const auto& bp : bs["phases"]) {
      const std::string name = bp.value("name", "");
      const json* np = find_by((*ns)["phases"], "name", name);
      if (!np) {
        rows.push_back({label, name + " us", bp["us"].get<double>(), 0, -1, "MISSING", true, false});
        continue;
      }
      // `us` is per forward; where the forwards a cycle differ (more draft steps) a per-forward
      // figure mixes in the cycle's own work spread over them, so the phase is compared per cycle
      const double bc = bp.value("count", 1.0), nc = np->value("count", 1.0);
      if (bc != nc)
        rows.push_back(figure(label, fmt::format("{} us a cycle ({:g} -> {:g} forwards)", name, bc, nc),
                              bp["us"].get<double>() * bc, (*np)["us"].get<double>() * nc, true, tol));
      else
        rows.push_back(figure(label, name + " us", bp["us"].get<double>(), (*np)["us"].get<double>(), true, tol));
    }
  }
  return rows;
}

Gate parse_gate(const std::string& text) {
  if (text == "tok_per_s") return Gate::TokPerS;
  if (text == "cycle_us") return Gate::CycleUs;
  if (text == "phases") return Gate::Phases;
  throw InputError("unknown gate '" + text + "': use tok_per_s, cycle_us or phases", "--gate");
}

std::string_view gate_name(Gate g) {
  switch (g) {
    case Gate::TokPerS: return "tok_per_s";
    case Gate::CycleUs: return "cycle_us";
    default: return "phases";
  }
}

bool gated(const CheckRow& r, Gate gate) {
  if (!r.numeric) return true;
  const bool tok = r.figure == "baseline tok/s" || r.figure == "spec tok/s";
  const bool cycle = r.figure == "cycle us" || r.figure == "baseline step us";
  const bool phase = !tok && !cycle;
  return gate == Gate::TokPerS ? tok : gate == Gate::CycleUs ? cycle : phase;
}

void apply_gate(std::vector<CheckRow>& rows, Gate gate) {
  for (auto& r : rows) {
    if (gated(r, gate) || !r.regressed) continue;
    r.regressed = false;
    r.status = "worse (not gated)";
  }
}

json check_json(const std::vector<CheckRow>& rows, Gate gate, double tol, const CheckContext& c) {
  json out = json::array();
  bool bad = false;
  for (const auto& r : rows) {
    bad |= r.regressed;
    json j = {{"allreduce", r.scenario},
              {"figure", r.figure},
              {"status", r.status},
              {"gated", gated(r, gate)},
              {"regressed", r.regressed}};
    if (r.numeric) j["baseline"] = r.baseline, j["now"] = r.now, j["delta"] = r.delta;
    out.push_back(j);
  }
  return {
      {"specsim_version", kSpecsimVersion},
      {"baseline",
       {{"file", c.baseline_file}, {"specsim_version", c.baseline_version}, {"carries_scenario", c.carried_scenario}}},
      {"changes_under_test", c.changes},
      {"input_differences", c.differences},
      {"gate", std::string(gate_name(gate))},
      {"tolerance", tol},
      {"verdict", bad ? "regressed" : "ok"},
      {"rows", out}};
}

std::string check_table(const std::vector<CheckRow>& rows) {
  size_t w = 22;  // the figure column fits its longest name (a phase compared per cycle)
  for (const auto& r : rows)
    if (r.numeric) w = std::max(w, r.figure.size());
  std::string out = fmt::format("{:<14} {:<{}} {:>12} {:>12} {:>9}  {}\n", "all-reduce", "figure", w, "baseline", "now",
                                "delta", "status");
  for (const auto& r : rows) {
    if (!r.numeric) {
      out += fmt::format("{:<14} {:<{}} {:>12} {:>12} {:>9}  {}\n", r.scenario, r.figure, w,
                         r.baseline != 0.0 ? fmt::format("{:.2f}", r.baseline) : "-", "-", "-", r.status);
      continue;
    }
    out += fmt::format("{:<14} {:<{}} {:>12.2f} {:>12.2f} {:>+8.2f}%  {}\n", r.scenario, r.figure, w, r.baseline, r.now,
                       100 * r.delta, r.status);
  }
  return out;
}

}  // namespace specsim::check
