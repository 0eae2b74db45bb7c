#include "evaluate/result_checks.h"

#include <fmt/format.h>

#include <cmath>

#include "util/error.h"

namespace specsim {

namespace {

// The flags that can push a figure out of range: the measured anchors when any was given.
std::string anchor_flags(const RunSpec& run) {
  std::string w;
  if (run.measured_baseline_tok_s) w += "--measured-baseline-tok-s";
  if (run.measured_allreduce_us) w += std::string(w.empty() ? "" : ", ") + "--measured-allreduce-us";
  if (run.measured_spec_tok_s) w += std::string(w.empty() ? "" : ", ") + "--measured-spec-tok-s";
  return w.empty() ? "--model-path, --hardware" : w;
}

void walk(const nlohmann::json& j, const std::string& path, const std::string& where) {
  if (j.is_number_float() && !std::isfinite(j.get<double>()))
    throw InputError("a computed figure is not finite (" + path + "): an input is out of range", where);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) walk(it.value(), path + "." + it.key(), where);
  else if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) walk(j[i], fmt::format("{}[{}]", path, i), where);
}

}  // namespace

std::string figure_problem(const RunSpec& run, const CycleResult& c) {
  auto bad = [&](double v, const std::string& what) {
    return fmt::format("the {} {} comes out {:g}: an input is out of range ({})", c.backend.label(), what, v,
                       anchor_flags(run));
  };
  auto ok = [](double v) { return std::isfinite(v) && v > 0; };
  for (const auto& p : c.phases)
    if (!ok(p.us)) return bad(p.us, std::string(phase_name(p.kind)) + " time (us)");
  if (!ok(c.baseline_step_us)) return bad(c.baseline_step_us, "baseline step (us)");
  if (!ok(c.baseline_tok_s)) return bad(c.baseline_tok_s, "baseline tok/s");
  if (run.speculative() && !ok(c.cycle_us)) return bad(c.cycle_us, "cycle (us)");
  if (run.speculative() && !ok(c.spec_tok_s)) return bad(c.spec_tok_s, "speculative tok/s");
  if (!std::isfinite(c.speedup) || !std::isfinite(c.breakeven_accept_len) || !std::isfinite(c.allreduce_share))
    return bad(c.speedup, "speedup or break-even");
  return "";
}

void check_result_figures(const Scenario& s, const ScenarioResult& r) {
  for (const auto& c : r.results) {
    if (!c.refused.empty()) continue;
    if (const std::string why = figure_problem(s.run, c); !why.empty()) {
      const auto open = why.rfind(" (");
      throw InputError(why.substr(0, open), why.substr(open + 2, why.size() - open - 3));
    }
  }
}

void require_finite_json(const nlohmann::json& j, const std::string& where) { walk(j, "report", where); }

}  // namespace specsim
