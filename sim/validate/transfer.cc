#include "validate/transfer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "accept/accept_len.h"
#include "evaluate/evaluate_scenario.h"
#include "evaluate/result_checks.h"
#include "scenario/scenario_file.h"
#include "util/error.h"
#include "util/shell_quote.h"

namespace specsim {

using nlohmann::json;

namespace {

// What one run predicts, per request stream.
struct Predicted {
  double baseline_tok_s = 0, spec_tok_s = 0, speedup = 0, accept_len = 0;
  std::string accept_source;
  std::optional<AnchorEntry> cycle;  ///< the cycle anchor the run derived (the anchor's run: its own)
};

// The run's first (and only: NCCL) backend, checked as `specsim run` checks it before printing.
Predicted predicted(const Scenario& s, int batch) {
  const ScenarioResult r = run_scenario(s);
  check_result_figures(s, r);
  const CycleResult& cr = r.results.front();
  if (!cr.refused.empty()) throw InputError("the all-reduce cannot run: " + cr.refused, "--allreduce");
  Predicted p{cr.baseline_tok_s / batch, cr.spec_tok_s / batch, cr.speedup, r.accept_len, r.accept_source, {}};
  for (const auto& e : r.anchor_report.entries)
    if (e.kind == AnchorKind::Cycle && e.used) p.cycle = e;
  return p;
}

void fill(TransferRow& row, const Predicted& p, bool speculative) {
  row.baseline_tok_s = p.baseline_tok_s;
  if (!speculative) return;
  row.spec_tok_s = p.spec_tok_s;
  row.speedup = p.speedup;
  row.accept_len = p.accept_len;
  row.accept_source = p.accept_source;
}

// The file name the anchor's run saves: one per family, named by its anchor.
std::string scenario_file_name(const CaseFamily& f) { return "transfer-" + f.id + ".json"; }

// The anchor's run: its settings, its measured baseline and spec tok/s (the whole batch's, as run
// takes them) with the accept length the source states beside it (a cycle anchor: the cycle time
// the model does not explain), saved as a scenario file for the other rows.
CaseRun anchor_run(const PublishedCase& a, const std::string& file) {
  std::string why;
  CaseRun r = *case_run(a, why, CaseAcceptance::Measured);
  if (a.spec_tok_s && a.accept_length) r.put("--accept-len", r.args.accept_len, *a.accept_length);
  r.put("--measured-baseline-tok-s", r.args.measured_baseline_tok_s, *a.baseline_tok_s * *a.batch_size);
  r.flags.insert(r.flags.end(), {"--save-scenario", file});
  return r;
}

// The anchor's stated accept length projected to a row's draft shape, for a row that states none
// (the anchor's file holds the anchor's own accept length, which `run --scenario` would take
// unprojected): the chain formula, or SGLang's draft tree for topk > 1, with `decay`, the per-depth
// decay of the draft the anchor's scenario resolved (1 where its profile states none).
double projected_accept_len(const PublishedCase& a, const PublishedCase& c, double decay) {
  const double rate = accept_rate_at(*a.accept_length, a.num_steps.value_or(0), a.topk.value_or(1),
                                     a.num_draft_tokens.value_or(0), decay);
  return accept_len_at(rate, c.num_steps.value_or(0), c.topk.value_or(1), c.num_draft_tokens.value_or(0), decay);
}

// A row at its own settings, its accept length where it states one; what it does not state comes
// from the anchor's file, as `specsim run --scenario FILE` fills it. A row that states no accept
// length takes the anchor's measured acceptance, projected to its draft shape; with none to take,
// it is predicted without speculation.
TransferRow predict_row(const PublishedCase& c, const PublishedCase& a, const json& file, const std::string& file_name,
                        bool anchor_has_spec, double anchor_decay) {
  TransferRow row;
  row.c = c;
  PublishedCase settings = c;
  if (!c.accept_length && c.spec_tok_s && !anchor_has_spec) {
    row.spec_skipped = "no accept length stated, and the anchor measures no spec tok/s to take one from";
    settings.spec_tok_s.reset();
  }
  // The anchor states its accept length: its file holds it, so a row without one is given the
  // anchor's projected to its own shape (on its command line, where it outranks the file's).
  const bool projected = !c.accept_length && settings.spec_tok_s && a.accept_length && a.spec_tok_s && c.num_steps &&
                         c.num_draft_tokens && a.num_steps && a.num_draft_tokens;
  if (projected) settings.accept_length = projected_accept_len(a, c, anchor_decay);
  std::string why;
  CaseRun run = *case_run(settings, why, CaseAcceptance::LengthOnly);
  row.command = "specsim run --scenario " + shell_quote(file_name) + " " + shell_join(run.flags);
  try {
    RunArgs args = run.args;
    args_from_scenario_file(file, args, file_name);
    Scenario s = resolve_scenario(args);
    apply_scenario_file(file, s, file_name);
    fill(row, predicted(s, *c.batch_size), s.run.speculative());
    if (projected)
      row.accept_source =
          fmt::format("the anchor's stated {:.3g} at ({}, {}, {}) projected through {}", *a.accept_length, *a.num_steps,
                      a.topk.value_or(1), *a.num_draft_tokens,
                      a.topk.value_or(1) == 1 && c.topk.value_or(1) == 1 ? "the chain formula" : "SGLang's draft tree");
  } catch (const InputError& e) {
    row.refused = "run refuses it: " + e.line();
  }
  return row;
}

// A row whose plain decode is the anchor's own measurement (same batch, same figure: the source's
// one baseline of a table over draft settings) predicts nothing about the baseline.
bool anchors_baseline(const TransferRow& r, const TransferFamily& t) {
  const PublishedCase& a = t.family.cases[*t.family.anchor];
  return r.c.batch_size == a.batch_size && r.c.baseline_tok_s == a.baseline_tok_s;
}

TransferFamily transfer_family(const CaseFamily& f) {
  TransferFamily t;
  t.family = f;
  if (!f.anchor) return t.not_scored = "no anchor: " + f.no_anchor, t;
  const PublishedCase& a = f.cases[*f.anchor];
  t.scenario_file = scenario_file_name(f);
  const CaseRun ar = anchor_run(a, t.scenario_file);
  t.anchor_command = case_run_command(ar);
  json file;
  TransferRow anchor_row;
  anchor_row.c = a, anchor_row.anchor = true, anchor_row.command = t.anchor_command;
  double anchor_decay = 1.0;
  try {
    const Scenario s = resolve_scenario(ar.args);
    anchor_decay = s.run.accept_decay;
    const Predicted p = predicted(s, *a.batch_size);
    fill(anchor_row, p, s.run.speculative());
    t.anchor_cycle = p.cycle;
    // As `specsim run --save-scenario` writes it and `--scenario` reads it back.
    file = json::parse(
        scenario_file_json(s, *a.zoo_model, a.zoo_draft.value_or(""), ar.args.runtime.value_or("")).dump(2));
  } catch (const InputError& e) {
    t.anchor_refused = true;
    return t.not_scored = "the anchor's measurements cannot be used: " + e.line(), t;
  }
  const bool anchor_has_spec = ar.args.measured_spec_tok_s.has_value();
  for (std::size_t i = 0; i < f.cases.size(); ++i)
    t.rows.push_back(i == *f.anchor ? anchor_row
                                    : predict_row(f.cases[i], a, file, t.scenario_file, anchor_has_spec, anchor_decay));
  for (auto& r : t.rows) {
    if (r.anchor) continue;
    r.spec_bound = spec_data_bound(r.c, a);
    if (!anchors_baseline(r, t)) r.baseline_bound = baseline_data_bound(r.c, a);
  }
  if (f.cases.size() == 1) t.not_scored = "one row: nothing to predict from its anchor";
  return t;
}

// The rows a family scores on one figure: predicted from the anchor (the anchor itself is
// reproduced, not predicted); `only`: those that change that from the anchor.
std::vector<ErrorPoint> points(const std::vector<TransferFamily>& families, bool held_out, TransferFigure fig,
                               std::optional<TransferChange> only = std::nullopt) {
  std::vector<ErrorPoint> out;
  for (const auto& t : families) {
    if (!t.not_scored.empty()) continue;
    for (const auto& r : t.rows) {
      if (r.anchor || r.c.held_out != held_out) continue;
      if (only && transfer_change(r, t) != *only) continue;
      std::optional<double> p, m;
      if (fig == TransferFigure::Baseline && !anchors_baseline(r, t)) p = r.baseline_tok_s, m = r.c.baseline_tok_s;
      if (fig == TransferFigure::Spec) p = r.spec_tok_s, m = r.c.spec_tok_s;
      if (fig == TransferFigure::Speedup) p = r.speedup, m = r.c.speedup();
      if (p && m) out.push_back({*p, *m, r.c.id});
    }
  }
  return out;
}

}  // namespace

TransferChange transfer_change(const TransferRow& r, const TransferFamily& t) {
  const PublishedCase& a = t.family.cases[*t.family.anchor];
  if (r.c.batch_size != a.batch_size) return TransferChange::BatchSize;
  if (r.c.topk.value_or(1) != a.topk.value_or(1)) return TransferChange::TopK;
  if (r.c.num_steps != a.num_steps || r.c.num_draft_tokens != a.num_draft_tokens || r.c.algorithm != a.algorithm)
    return TransferChange::DraftSettings;
  return TransferChange::WorkloadOnly;
}

const char* transfer_change_name(TransferChange c) {
  switch (c) {
    case TransferChange::BatchSize: return "batch size";
    case TransferChange::TopK: return "top-k";
    case TransferChange::DraftSettings: return "other draft settings";
    case TransferChange::WorkloadOnly: return "workload only";
  }
  return "?";
}

std::vector<ErrorPoint> transfer_points(const TransferResult& r, bool held_out, TransferFigure fig) {
  return points(r.families, held_out, fig);
}

TransferResult run_transfer(const std::string& set_dir, const std::string& label, const std::string& case_id) {
  TransferResult r;
  r.set = label.empty() ? set_dir : label;
  const std::vector<PublishedCase> cases = load_published_set(set_dir, "--set");
  std::vector<SkippedCase> skipped;
  std::vector<CaseFamily> families = group_families(cases, skipped);
  if (!case_id.empty()) {
    // The family holding the case, or the case's reason for being in none.
    std::erase_if(families, [&](const CaseFamily& f) {
      for (const auto& c : f.cases)
        if (c.id == case_id) return false;
      return true;
    });
    std::erase_if(skipped, [&](const SkippedCase& s) { return s.first.id != case_id; });
    if (families.empty() && skipped.empty())
      throw InputError(
          fmt::format("no case '{}' in {} (the ids are the first column of `specsim validate`)", case_id, r.set),
          "--case");
  }
  r.skipped = std::move(skipped);
  for (const auto& f : families) {
    TransferFamily t = transfer_family(f);
    for (int h = 0; h < 2; ++h) {
      t.baseline[h] = error_stats(points({t}, h == 1, TransferFigure::Baseline));
      t.spec[h] = error_stats(points({t}, h == 1, TransferFigure::Spec));
    }
    r.families.push_back(std::move(t));
  }
  for (int h = 0; h < 2; ++h) {
    r.baseline[h] = error_stats(points(r.families, h == 1, TransferFigure::Baseline));
    r.spec[h] = error_stats(points(r.families, h == 1, TransferFigure::Spec));
    r.speedup[h] = error_stats(points(r.families, h == 1, TransferFigure::Speedup));
  }
  for (const TransferChange c : kTransferChanges)
    r.spec_by_change[static_cast<int>(c)] = error_stats(points(r.families, true, TransferFigure::Spec, c));
  for (const auto& t : r.families) {
    if (!t.not_scored.empty()) continue;
    for (const auto& row : t.rows) {
      if (!row.c.held_out) continue;
      if (row.spec_bound && row.spec_tok_s)
        r.spec_bounded.push_back({row.c.id, row.spec_bound->pct, error_pct(*row.spec_tok_s, *row.c.spec_tok_s)});
      if (row.baseline_bound && row.baseline_tok_s)
        r.baseline_bounded.push_back(
            {row.c.id, row.baseline_bound->pct, error_pct(*row.baseline_tok_s, *row.c.baseline_tok_s)});
    }
  }
  r.targets = {{"spec tok/s, held-out, median", 5, r.spec[1], true},
               {"spec tok/s, held-out, worst", 15, r.spec[1], false}};
  // The worst error no prediction that keeps its anchor can avoid: the largest data bound.
  for (const auto& b : r.spec_bounded)
    if (!r.targets[1].floor_pct || std::abs(b.bound_pct) > *r.targets[1].floor_pct)
      r.targets[1].floor_pct = std::abs(b.bound_pct), r.targets[1].floor_id = b.id;
  return r;
}

}  // namespace specsim
