#include "validate/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

using nlohmann::json;

namespace {

CaseOutcome predict(const PublishedCase& c) {
  CaseOutcome o;
  o.c = c;
  o.run = case_run(c, o.skipped);
  if (!o.run) return o;
  const RunArgs& a = o.run->args;
  auto evaluate = [&](const RunArgs& args) {
    const Scenario s = resolve_scenario(args);
    const ScenarioResult r = run_scenario(s);
    const CycleResult cr = r.results.front();
    if (!cr.refused.empty()) throw InputError("the all-reduce cannot run: " + cr.refused, "--allreduce");
    return cr;
  };
  const double bs = *c.batch_size;
  try {
    const CycleResult cr = evaluate(a);
    o.baseline_tok_s = cr.baseline_tok_s / bs;
    if (c.accept_length) {
      o.spec_tok_s = cr.spec_tok_s / bs;
      o.speedup = cr.speedup;
    } else {
      o.spec_skipped = "no accept length stated";
      if (c.spec_tok_s) o.implied_accept_len = cr.accept_len;
    }
    return o;
  } catch (const InputError& e) {
    o.spec_skipped = "cannot model the speculation: " + e.line();
  }
  try {  // the plain decode step alone, printed as its own command
    std::string why;
    o.run = case_run(c, why, CaseAcceptance::PlainOnly);
    o.baseline_tok_s = evaluate(o.run->args).baseline_tok_s / bs;
  } catch (const InputError& e) {
    o.skipped = "cannot model: " + e.line();
  }
  return o;
}

ErrorStats stats(const std::vector<CaseOutcome>& cases, bool held_out,
                 std::optional<double> (*pred)(const CaseOutcome&), std::optional<double> (*meas)(const CaseOutcome&)) {
  std::vector<ErrorPoint> points;
  for (const auto& o : cases) {
    if (o.c.held_out != held_out) continue;
    const auto p = pred(o), m = meas(o);
    if (p && m) points.push_back({*p, *m, o.c.id});
  }
  return error_stats(points);
}

// One plain measurement: the source, the deployment and batch it was taken at, and its figure.
std::string plain_measurement_key(const PublishedCase& c) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{:.17g}", c.url, c.zoo_model.value_or(""), c.dtype.value_or(""),
                     c.zoo_gpu.value_or(""), c.zoo_topology.value_or(""), c.tp.value_or(0), c.batch_size.value_or(0),
                     c.context_len.value_or(0), c.serving_version.value_or(""), c.baseline_tok_s.value_or(0));
}

std::optional<double> pred_base(const CaseOutcome& o) { return o.baseline_repeat ? std::nullopt : o.baseline_tok_s; }

std::optional<double> meas_base(const CaseOutcome& o) { return o.c.baseline_tok_s; }
std::optional<double> pred_spec(const CaseOutcome& o) { return o.spec_tok_s; }
std::optional<double> meas_spec(const CaseOutcome& o) { return o.c.spec_tok_s; }
std::optional<double> pred_speedup(const CaseOutcome& o) { return o.speedup; }
std::optional<double> meas_speedup(const CaseOutcome& o) { return o.c.speedup(); }

std::string cell(std::optional<double> v, const char* f = "{:.1f}") { return value_cell(v, f); }

std::string err_cell(std::optional<double> p, std::optional<double> m) { return error_cell(p, m); }

json assumptions_json(const PublishedCase& c) {
  json a = json::object();
  for (const auto& [field, why] : c.assumptions) a[field] = why;
  return a;
}

}  // namespace

ValidateResult run_validate(const std::string& set_dir, const std::string& label) {
  ValidateResult r;
  r.set = label.empty() ? set_dir : label;
  std::set<std::string> plain_seen;
  for (const auto& c : load_published_set(set_dir, "--set")) {
    r.cases.push_back(predict(c));
    if (c.baseline_tok_s) r.cases.back().baseline_repeat = !plain_seen.insert(plain_measurement_key(c)).second;
  }
  for (int h = 0; h < 2; ++h) {
    r.baseline[h] = stats(r.cases, h == 1, pred_base, meas_base);
    r.spec[h] = stats(r.cases, h == 1, pred_spec, meas_spec);
    r.speedup[h] = stats(r.cases, h == 1, pred_speedup, meas_speedup);
  }
  r.targets = {{"spec tok/s, held-out, median", 10, r.spec[1], true},
               {"spec tok/s, held-out, worst", 25, r.spec[1], false},
               {"baseline tok/s, held-out, median", 10, r.baseline[1], true}};
  return r;
}

json case_json(const CaseOutcome& o) {
  return {{"id", o.c.id},
          {"file", o.c.file},
          {"role", o.c.held_out ? "held_out" : "fit"},
          {"skipped", o.skipped.empty() ? json(nullptr) : json(o.skipped)},
          {"spec_skipped", o.spec_skipped.empty() ? json(nullptr) : json(o.spec_skipped)},
          {"implied_accept_len", json_or_null(o.implied_accept_len)},
          {"baseline_repeat", o.baseline_repeat},
          {"assumptions", assumptions_json(o.c)},
          {"command", o.run ? json(case_run_command(*o.run)) : json(nullptr)},
          {"measured",
           {{"baseline_tok_s", json_or_null(o.c.baseline_tok_s)},
            {"spec_tok_s", json_or_null(o.c.spec_tok_s)},
            {"speedup", json_or_null(o.c.speedup())}}},
          {"predicted",
           {{"baseline_tok_s", json_or_null(o.baseline_tok_s)},
            {"spec_tok_s", json_or_null(o.spec_tok_s)},
            {"speedup", json_or_null(o.speedup)}}}};
}

CaseOutcome validate_case(const std::string& set_dir, const std::string& id, const std::string& label) {
  for (const auto& c : load_published_set(set_dir, "--set"))
    if (c.id == id) return predict(c);
  throw InputError(fmt::format("no case '{}' in {} (the ids are the first column of `specsim validate`)", id,
                               label.empty() ? set_dir : label),
                   "--case");
}

std::string case_text(const CaseOutcome& o) {
  const auto figure = [](const char* what, std::optional<double> pred, std::optional<double> meas, const char* f) {
    return fmt::format("  {:<16} measured {:>8}  predicted {:>8}  error {:>6}\n", what, cell(meas, f), cell(pred, f),
                       err_cell(pred, meas));
  };
  std::string out =
      fmt::format("case {} ({}, {})\n  source: {}\n", o.c.id, o.c.held_out ? "held out" : "fit", o.c.file, o.c.url);
  if (!o.skipped.empty()) out += fmt::format("  not predicted: {}\n", o.skipped);
  out += figure("baseline tok/s", o.baseline_tok_s, o.c.baseline_tok_s, "{:.1f}");
  out += figure("spec tok/s", o.spec_tok_s, o.c.spec_tok_s, "{:.1f}");
  out += figure("speedup", o.speedup, o.c.speedup(), "{:.2f}");
  if (o.c.accept_length)
    out += fmt::format("  accept len       {:.3g} (as the source states it)\n", *o.c.accept_length);
  if (o.implied_accept_len)
    out += fmt::format("  accept len       {:.2f} (implied by the measured spec tok/s; none stated)\n",
                       *o.implied_accept_len);
  if (!o.spec_skipped.empty()) out += fmt::format("  speculation not predicted: {}\n", o.spec_skipped);
  for (const auto& [field, why] : o.c.assumptions) out += fmt::format("  assumed {}: {}\n", field, why);
  if (!o.run) return out + fmt::format("  no run: {}\n", o.skipped);
  out += fmt::format("  replay: {}\n", case_run_command(*o.run));
  if (o.c.batch_size && *o.c.batch_size > 1)
    out += fmt::format("  (the figures above are per request stream; the run reports the whole batch of {})\n",
                       *o.c.batch_size);
  return out;
}

std::string validate_text(const ValidateResult& r) {
  std::string out = fmt::format(
      "published cases in {}: {} (predicted without anchors; tok/s per request stream; error = predicted / "
      "measured - 1)\n\n",
      r.set, r.cases.size());
  out += fmt::format("  {:<48} {:<8} {:>8} {:>8} {:>6}  {:>8} {:>8} {:>6}  {:>6} {:>6} {:>6}\n", "case", "role", "base",
                     "pred", "err", "spec", "pred", "err", "x", "pred", "err");
  std::string skipped;
  // A source's assumption is often shared by its cases (the GPU variant, the draft): each text once.
  std::vector<std::pair<std::string, std::string>> notes;
  std::map<std::pair<std::string, std::string>, int> note_number;
  for (const auto& o : r.cases) {
    if (!o.skipped.empty()) {
      skipped += fmt::format("  {:<48} {}\n", o.c.id, o.skipped);
      continue;
    }
    const auto mx = o.c.speedup();
    out += fmt::format("  {:<48} {:<8} {:>8} {:>8} {:>6}  {:>8} {:>8} {:>6}  {:>6} {:>6} {:>6}\n", o.c.id,
                       o.c.held_out ? "held_out" : "fit", cell(o.c.baseline_tok_s), cell(o.baseline_tok_s),
                       err_cell(o.baseline_tok_s, o.c.baseline_tok_s), cell(o.c.spec_tok_s), cell(o.spec_tok_s),
                       err_cell(o.spec_tok_s, o.c.spec_tok_s), cell(mx, "{:.2f}"), cell(o.speedup, "{:.2f}"),
                       err_cell(o.speedup, mx));
    if (!o.c.assumptions.empty()) {
      std::vector<int> refs;
      for (const auto& a : o.c.assumptions) {
        const auto [it, added] = note_number.try_emplace(a, static_cast<int>(notes.size()) + 1);
        if (added) notes.push_back(a);
        refs.push_back(it->second);
      }
      std::sort(refs.begin(), refs.end());
      out += fmt::format("  {:<48} (assumed: notes {})\n", "", fmt::join(refs, ", "));
    }
    if (!o.spec_skipped.empty())
      out += fmt::format("  {:<48} (speculation not predicted: {}{})\n", "", o.spec_skipped,
                         o.implied_accept_len
                             ? fmt::format("; the measured spec tok/s implies accept len {:.2f}", *o.implied_accept_len)
                             : "");
  }
  if (!notes.empty()) out += "\nassumptions (what a source does not state and a case fills in):\n";
  for (size_t i = 0; i < notes.size(); ++i)
    out += fmt::format("  [{}] {}: {}\n", i + 1, notes[i].first, notes[i].second);
  if (!skipped.empty()) out += "\nskipped:\n" + skipped;
  int repeats = 0;
  for (const auto& o : r.cases) repeats += o.baseline_repeat;
  out += fmt::format(
      "\nerrors (|predicted/measured - 1|; a plain measurement a source repeats on several rows counts once: {} "
      "repeats left out of the baseline figures):\n",
      repeats);
  const char* role[2] = {"fit", "held-out"};
  for (int h = 0; h < 2; ++h) {
    out += stats_text(fmt::format("baseline tok/s, {}", role[h]), r.baseline[h]);
    out += stats_text(fmt::format("spec tok/s, {}", role[h]), r.spec[h]);
    out += stats_text(fmt::format("speedup, {}", role[h]), r.speedup[h]);
  }
  return out + targets_text(r.targets);
}

json validate_json(const ValidateResult& r) {
  json cases = json::array();
  for (const auto& o : r.cases) cases.push_back(case_json(o));
  json summary = json::object();
  const char* role[2] = {"fit", "held_out"};
  for (int h = 0; h < 2; ++h)
    summary[role[h]] = {{"baseline_tok_s", stats_json(r.baseline[h])},
                        {"spec_tok_s", stats_json(r.spec[h])},
                        {"speedup", stats_json(r.speedup[h])}};
  return {{"set", r.set}, {"cases", cases}, {"summary", summary}, {"targets", targets_json(r.targets)}};
}

}  // namespace specsim
