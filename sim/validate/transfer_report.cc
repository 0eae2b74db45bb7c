// `validate --transfer` as text and JSON: a table per family, the errors per family and overall,
// the targets.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/json_io.h"
#include "util/shell_quote.h"
#include "validate/transfer.h"

namespace specsim {

using nlohmann::json;

namespace {

const char* const kRole[2] = {"fit", "held_out"};

json opt(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
json opt(std::optional<double> v) { return json_or_null(v); }

std::optional<double> error_of(std::optional<double> p, std::optional<double> m) {
  if (p && m) return error_pct(*p, *m);
  return std::nullopt;
}

std::string shape(const PublishedCase& c) {
  if (!c.spec_tok_s && !c.accept_length) return "-";
  const auto n = [](std::optional<int> v) { return v ? std::to_string(*v) : std::string("?"); };
  return n(c.num_steps) + "/" + n(c.topk) + "/" + n(c.num_draft_tokens);
}

// The anchor's cycle anchor in words: what its measurement reveals and how it is carried.
std::string cycle_text(const AnchorEntry& e) {
  return fmt::format(
      "(its spec tok/s at the stated accept len {:.3g}: a {:.0f} us cycle, the model's {:.0f} us; the {:+.0f} us not "
      "explained carried to every row as {:+.1f} us per draft decode forward, {:+.1f} us per draft extend and "
      "{:+.1f} us per verify)\n",
      e.accept_len, e.model + e.derived, e.model, e.derived, e.step_extra_us, e.extend_extra_us, e.verify_extra_us);
}

std::string row_text(const TransferRow& r, const std::optional<AnchorEntry>& cycle = std::nullopt) {
  const auto& c = r.c;
  std::string out = fmt::format(
      "    {:<56} {:<8} {:>3} {:>8} {:>5}  {:>7} {:>7} {:>5}  {:>7} {:>7} {:>5}  {:>5} {:>5} {:>5}\n", c.id,
      r.anchor ? "anchor" : kRole[c.held_out], *c.batch_size, shape(c), value_cell(r.accept_len, "{:.2f}"),
      value_cell(c.baseline_tok_s), value_cell(r.baseline_tok_s), error_cell(r.baseline_tok_s, c.baseline_tok_s),
      value_cell(c.spec_tok_s), value_cell(r.spec_tok_s), error_cell(r.spec_tok_s, c.spec_tok_s),
      value_cell(c.speedup(), "{:.2f}"), value_cell(r.speedup, "{:.2f}"), error_cell(r.speedup, c.speedup()));
  const std::string indent(61, ' ');
  if (r.anchor && cycle)
    out += indent + cycle_text(*cycle);
  else if (r.anchor && r.accept_len && c.accept_length)
    out += fmt::format(
        "{}(its spec tok/s implies accept len {:.2f} under the anchored cycle; the source states "
        "{:.3g})\n",
        indent, *r.accept_len, *c.accept_length);
  else if (!r.anchor && r.accept_len && !c.accept_length)
    out += fmt::format("{}(accept len {:.2f}: {})\n", indent, *r.accept_len, r.accept_source);
  if (!r.spec_skipped.empty()) out += fmt::format("{}(speculation not predicted: {})\n", indent, r.spec_skipped);
  if (!r.refused.empty()) out += fmt::format("{}(not predicted: {})\n", indent, r.refused);
  if (r.baseline_bound)
    out += fmt::format("{}(the family's own data bound its baseline: {})\n", indent, r.baseline_bound->why);
  if (r.spec_bound)
    out += fmt::format("{}(the family's own data bound its spec tok/s: {})\n", indent, r.spec_bound->why);
  return out;
}

std::string family_text(std::size_t n, const TransferFamily& t) {
  const CaseFamily& f = t.family;
  std::string out = fmt::format("family {}: {} ({} row{})\n  source: {}\n  deployment: {}\n", n, f.id, f.cases.size(),
                                f.cases.size() == 1 ? "" : "s", f.source, f.deployment);
  if (t.anchor_refused)
    out += fmt::format("  anchor (refused, for the reason below): {}\n", t.anchor_command);
  else if (!t.anchor_command.empty())
    out += fmt::format("  anchor: {}\n  rows:   specsim run --scenario {} <the row's settings> (each in --json)\n",
                       t.anchor_command, shell_quote(t.scenario_file));
  if (!t.not_scored.empty()) out += fmt::format("  not scored: {}\n", t.not_scored);
  out += fmt::format("    {:<56} {:<8} {:>3} {:>8} {:>5}  {:>7} {:>7} {:>5}  {:>7} {:>7} {:>5}  {:>5} {:>5} {:>5}\n",
                     "case", "role", "bs", "S/K/N", "acc", "base", "pred", "err", "spec", "pred", "err", "x", "pred",
                     "err");
  if (t.rows.empty())
    for (const auto& c : f.cases) {
      TransferRow unpredicted;
      unpredicted.c = c;
      out += row_text(unpredicted);
    }
  for (const auto& r : t.rows) out += row_text(r, t.anchor_cycle);
  if (!t.not_scored.empty()) return out + "\n";
  std::string stats;  // the figures this family scores, fit and held-out apart
  for (int h = 0; h < 2; ++h) {
    const char* role = h ? "held-out" : "fit";
    if (t.baseline[h].n) stats += stats_text(fmt::format("baseline tok/s, {}", role), t.baseline[h]);
    if (t.spec[h].n) stats += stats_text(fmt::format("spec tok/s, {}", role), t.spec[h]);
  }
  out += stats.empty() ? "  no predicted row has a measured figure to score\n" : stats;
  return out + "\n";
}

json row_json(const TransferRow& r) {
  const auto& c = r.c;
  return {
      {"id", c.id},
      {"file", c.file},
      {"role", kRole[c.held_out]},
      {"anchor", r.anchor},
      {"command", opt(r.command)},
      {"refused", opt(r.refused)},
      {"spec_skipped", opt(r.spec_skipped)},
      {"batch_size", *c.batch_size},
      {"accept_len", {{"stated", opt(c.accept_length)}, {"used", opt(r.accept_len)}, {"source", opt(r.accept_source)}}},
      {"measured",
       {{"baseline_tok_s", opt(c.baseline_tok_s)}, {"spec_tok_s", opt(c.spec_tok_s)}, {"speedup", opt(c.speedup())}}},
      {"predicted",
       {{"baseline_tok_s", opt(r.baseline_tok_s)}, {"spec_tok_s", opt(r.spec_tok_s)}, {"speedup", opt(r.speedup)}}},
      {"error_pct",
       {{"baseline_tok_s", opt(error_of(r.baseline_tok_s, c.baseline_tok_s))},
        {"spec_tok_s", opt(error_of(r.spec_tok_s, c.spec_tok_s))},
        {"speedup", opt(error_of(r.speedup, c.speedup()))}}},
      {"data_bound_pct",
       {{"baseline_tok_s", r.baseline_bound ? json(r.baseline_bound->pct) : json(nullptr)},
        {"spec_tok_s", r.spec_bound ? json(r.spec_bound->pct) : json(nullptr)}}}};
}

// The held-out rows whose error their family's own data bound, the largest bound first.
std::string bounded_text(const char* figure, std::vector<TransferResult::BoundedRow> rows) {
  if (rows.empty()) return fmt::format("  {:<24} none\n", figure);
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return std::abs(a.bound_pct) > std::abs(b.bound_pct); });
  std::string out = fmt::format("  {:<24} {} row{}\n", figure, rows.size(), rows.size() == 1 ? "" : "s");
  for (const auto& b : rows)
    out += fmt::format("    {:<56} bound {:+6.1f}%  error {:+6.1f}%\n", b.id, b.bound_pct, b.error_pct);
  return out;
}

json bounded_json(const std::vector<TransferResult::BoundedRow>& rows) {
  json out = json::array();
  for (const auto& b : rows) out.push_back({{"id", b.id}, {"bound_pct", b.bound_pct}, {"error_pct", b.error_pct}});
  return out;
}

json family_json(const TransferFamily& t) {
  const CaseFamily& f = t.family;
  json rows = json::array();
  for (const auto& r : t.rows) rows.push_back(row_json(r));
  json cases = json::array();
  for (const auto& c : f.cases) cases.push_back(c.id);
  json cycle = nullptr;
  if (const auto& e = t.anchor_cycle)
    cycle = {{"accept_len", e->accept_len},
             {"measured_cycle_us", e->model + e->derived},
             {"model_cycle_us", e->model},
             {"unexplained_us_per_cycle", e->derived},
             {"extra_us_per_draft_forward", e->step_extra_us},
             {"extra_us_per_draft_extend", e->extend_extra_us},
             {"extra_us_per_verify", e->verify_extra_us}};
  return {{"id", f.id},
          {"source", f.source},
          {"deployment", f.deployment},
          {"cases", cases},
          {"anchor", f.anchor ? json(f.cases[*f.anchor].id) : json(nullptr)},
          {"scored", t.not_scored.empty()},
          {"not_scored", opt(t.not_scored)},
          {"scenario_file", opt(t.scenario_file)},
          {"anchor_command", opt(t.anchor_command)},
          {"anchor_refused", t.anchor_refused},
          {"anchor_cycle", cycle},
          {"rows", rows},
          {"summary",
           {{"fit", {{"baseline_tok_s", stats_json(t.baseline[0])}, {"spec_tok_s", stats_json(t.spec[0])}}},
            {"held_out", {{"baseline_tok_s", stats_json(t.baseline[1])}, {"spec_tok_s", stats_json(t.spec[1])}}}}}};
}

}  // namespace

std::string transfer_text(const TransferResult& r) {
  std::string out = fmt::format(
      "published cases in {}, by family (one source, runtime and version, model and draft, GPU box and tp), each "
      "predicted from its anchor row's measurements (tok/s per request stream; error = predicted / measured - 1)\n"
      "anchor rule: {}\n\n",
      r.set, kAnchorRule);
  std::size_t n = 0;
  for (const auto& t : r.families) out += family_text(++n, t);
  if (!r.skipped.empty()) {
    out += "in no family (the row states too little to be run):\n";
    for (const auto& [c, why] : r.skipped) out += fmt::format("  {:<56} {}\n", c.id, why);
    out += "\n";
  }
  int scored = 0;
  for (const auto& t : r.families) scored += t.not_scored.empty();
  out += fmt::format(
      "errors over the rows predicted from an anchor ({} of {} families scored; anchors left out, and a baseline at "
      "the anchor's batch that is the anchor's own measurement):\n",
      scored, r.families.size());
  for (int h = 0; h < 2; ++h) {
    const char* role = h ? "held-out" : "fit";
    out += stats_text(fmt::format("baseline tok/s, {}", role), r.baseline[h]);
    out += stats_text(fmt::format("spec tok/s, {}", role), r.spec[h]);
    out += stats_text(fmt::format("speedup, {}", role), r.speedup[h]);
  }
  out +=
      "held-out spec tok/s by what the row changes from its anchor (a batch size; else the draft's top-k; else "
      "the other draft settings; else only the workload):\n";
  for (const TransferChange c : kTransferChanges)
    out += stats_text(fmt::format("  {}", transfer_change_name(c)), r.spec_by_change[static_cast<int>(c)]);
  out +=
      "held-out rows whose error the family's own data bound (at least the anchor's work measured faster, or at "
      "most its work slower: no prediction that keeps the anchor and does not get faster with more work comes "
      "closer):\n";
  out += bounded_text("baseline tok/s", r.baseline_bounded);
  out += bounded_text("spec tok/s", r.spec_bounded);
  return out + targets_text(r.targets);
}

json transfer_json(const TransferResult& r) {
  json families = json::array();
  for (const auto& t : r.families) families.push_back(family_json(t));
  json skipped = json::array();
  for (const auto& [c, why] : r.skipped) skipped.push_back({{"id", c.id}, {"why", why}});
  json summary = json::object();
  for (int h = 0; h < 2; ++h)
    summary[kRole[h]] = {{"baseline_tok_s", stats_json(r.baseline[h])},
                         {"spec_tok_s", stats_json(r.spec[h])},
                         {"speedup", stats_json(r.speedup[h])}};
  json by_change = json::object();
  for (const TransferChange c : kTransferChanges)
    by_change[transfer_change_name(c)] = stats_json(r.spec_by_change[static_cast<int>(c)]);
  summary["held_out_spec_tok_s_by_change"] = by_change;
  summary["held_out_data_bounded"] = {{"baseline_tok_s", bounded_json(r.baseline_bounded)},
                                      {"spec_tok_s", bounded_json(r.spec_bounded)}};
  return {{"set", r.set},       {"anchor_rule", kAnchorRule}, {"families", families},
          {"skipped", skipped}, {"summary", summary},         {"targets", targets_json(r.targets)}};
}

}  // namespace specsim
