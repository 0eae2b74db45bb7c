// Held-out errors by class -> the bands file. Only held-out rows count: the fit rows tuned the
// constants and would make the bands look narrower than a new deployment will see.
#include "validate/error_bands.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/error_band.h"
#include "scenario/model_spec.h"
#include "util/error.h"

namespace specsim {
namespace {

using nlohmann::json;

// "moe" or "dense" for a zoo model ("" when the case names none or its config cannot be read).
std::string model_kind(const std::optional<std::string>& zoo_model) {
  static std::map<std::string, std::string> cache;
  if (!zoo_model) return "";
  auto it = cache.find(*zoo_model);
  if (it != cache.end()) return it->second;
  std::string kind;
  try {
    const ModelSpec m = model_from_config(resolve_model_config(*zoo_model, "zoo_model"), "zoo_model");
    kind = m.has_moe ? "moe" : "dense";
  } catch (const InputError&) {
  }
  return cache[*zoo_model] = kind;
}

std::string stack_of(const std::string& serving) {
  std::string s;
  for (char ch : serving) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s == "sglang" || s == "vllm" ? s : "any";
}

// The share of errors below `q` of the sorted `e` (linear between neighbours).
double quantile(const std::vector<double>& e, double q) {
  const double pos = q * static_cast<double>(e.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(pos));
  const double f = pos - static_cast<double>(i);
  return i + 1 < e.size() ? e[i] * (1 - f) + e[i + 1] * f : e[i];
}

/// One held-out error (signed, percent), its case and the source it was published in.
struct CaseError {
  double err;
  std::string id, source;
  bool operator<(const CaseError& o) const { return err < o.err || (err == o.err && id < o.id); }
};

// One figure's errors -> {n, sources, lo_pct, hi_pct, median_abs_pct, cases}. `sources`: how many
// publications the cases come from (rows of one table are one deployment's spread, not n tests).
json band_entry(std::vector<CaseError> errs) {
  std::sort(errs.begin(), errs.end());
  std::vector<double> e, a;
  std::set<std::string> sources;
  json ids = json::array();
  for (const auto& x : errs)
    e.push_back(x.err), a.push_back(std::fabs(x.err)), ids.push_back(x.id), sources.insert(x.source);
  std::sort(a.begin(), a.end());
  const bool wide = e.size() >= static_cast<std::size_t>(kBandQuantileMinCases);
  auto r1 = [](double x) { return std::round(x * 10) / 10; };  // 0.1 %: what the report prints
  return {{"n", e.size()},
          {"sources", sources.size()},
          {"lo_pct", r1(wide ? quantile(e, 0.1) : e.front())},
          {"hi_pct", r1(wide ? quantile(e, 0.9) : e.back())},
          {"median_abs_pct", r1(quantile(a, 0.5))},
          {"cases", ids}};
}

// Errors per class key ("moe/sglang", "moe/any", "any/any") and figure.
using Groups = std::map<std::string, std::map<std::string, std::vector<CaseError>>>;

void add(Groups& g, const std::string& kind, const std::string& stack, const char* figure, double predicted,
         double measured, const PublishedCase& c) {
  const double err = error_pct(predicted, measured);
  if (!std::isfinite(err)) return;
  std::vector<std::string> keys = {kind + "/any", "any/any"};
  if (stack != "any") keys.push_back(kind + "/" + stack);
  for (const auto& key : keys) g[key][figure].push_back({err, c.id, c.url});
}

json groups_json(const Groups& g) {
  json out = json::object();
  for (const auto& [key, figures] : g) {
    json f = json::object();
    for (const auto& [figure, errs] : figures) f[figure] = band_entry(errs);
    out[key] = f;
  }
  return out;
}

}  // namespace

json error_bands_json(const ValidateResult& v, const TransferResult& t) {
  Groups unanchored, anchored, other_batch, other_topk;
  for (const auto& o : v.cases) {
    if (!o.c.held_out || !o.run) continue;
    const std::string kind = model_kind(o.c.zoo_model), stack = stack_of(o.c.serving);
    if (kind.empty()) continue;
    if (o.baseline_tok_s && o.c.baseline_tok_s && !o.baseline_repeat)
      add(unanchored, kind, stack, "baseline_tok_s", *o.baseline_tok_s, *o.c.baseline_tok_s, o.c);
    if (o.spec_tok_s && o.c.spec_tok_s) add(unanchored, kind, stack, "spec_tok_s", *o.spec_tok_s, *o.c.spec_tok_s, o.c);
    if (o.speedup && o.c.speedup()) add(unanchored, kind, stack, "speedup", *o.speedup, *o.c.speedup(), o.c);
  }
  // The transfer rows carry their case; its class is the family's. A row at another batch size
  // than its anchor's goes to the anchored-at-another-batch classes; one at the anchor's batch with
  // another top-k to the anchored-at-another-top-k classes (its spec figures only: transfer_points
  // leaves out a baseline that is the anchor's own); the others to the anchored classes.
  std::map<std::string, const PublishedCase*> by_id;
  std::map<std::string, TransferChange> change;
  for (const auto& f : t.families)
    for (const auto& r : f.rows) {
      by_id[r.c.id] = &r.c;
      TransferChange c = !r.anchor && f.family.anchor ? transfer_change(r, f) : TransferChange::WorkloadOnly;
      // As a run bands it (spec_band_anchoring): another top-k counts only beside a measured spec tok/s.
      if (c == TransferChange::TopK && !f.family.cases[*f.family.anchor].spec_tok_s) c = TransferChange::DraftSettings;
      change[r.c.id] = c;
    }
  const std::pair<TransferFigure, const char*> figures[] = {{TransferFigure::Baseline, "baseline_tok_s"},
                                                            {TransferFigure::Spec, "spec_tok_s"},
                                                            {TransferFigure::Speedup, "speedup"}};
  for (const auto& [fig, name] : figures)
    for (const ErrorPoint& p : transfer_points(t, true, fig)) {
      const PublishedCase& c = *by_id.at(p.id);
      const std::string kind = model_kind(c.zoo_model);
      if (kind.empty()) continue;
      const TransferChange ch = change.at(p.id);
      Groups& g = ch == TransferChange::BatchSize ? other_batch : ch == TransferChange::TopK ? other_topk : anchored;
      add(g, kind, stack_of(c.serving), name, p.predicted, p.measured, c);
    }
  return {{"what", "error bands: the range of the held-out errors of specsim's predictions per class"},
          {"rule", kBandRule},
          {"generated_by", "specsim validate --write-error-bands models/accuracy/error-bands.json"},
          {"set", v.set},
          {"classes",
           {{"unanchored", groups_json(unanchored)},
            {"anchored", groups_json(anchored)},
            {"anchored_other_batch", groups_json(other_batch)},
            {"anchored_other_topk", groups_json(other_topk)}}}};
}

}  // namespace specsim
