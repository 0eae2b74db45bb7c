#include "evaluate/evaluate_scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "accept/accept_len.h"
#include "util/error.h"

namespace specsim {

namespace {

// The draft's per-depth decay where its profile states one (scenario/draft_acceptance.h).
std::string decay_note(double decay) {
  return decay == 1.0 ? "" : fmt::format(", falling by the draft's per-depth decay {:g}", decay);
}

bool same_draft_settings(const RunSpec& a, const AnchorEntry& e) {
  return a.num_steps == e.steps && a.topk == e.topk && a.num_draft_tokens == e.draft_tokens;
}

void resolve_accept(const Scenario& s, ScenarioResult& out) {
  const RunSpec& run = s.run;
  if (!run.speculative()) return;
  const AnchorEntry* m = out.anchor_report.acceptance();
  if (run.accept_len) {
    out.accept_len = *run.accept_len;
    out.accept_source = run.accept_source.empty() ? "given (--accept-len)" : "from the " + run.accept_source;
  } else if (run.accept_rate) {
    out.accept_rate = *run.accept_rate;
    out.accept_len = accept_len_at(*run.accept_rate, run.num_steps, run.topk, run.num_draft_tokens, run.accept_decay);
    out.accept_source =
        run.topk == 1
            ? fmt::format("chain formula with {} {:g} over {} steps{}",
                          run.accept_source.empty() ? "--accept-rate" : "the accept rate of the " + run.accept_source,
                          *run.accept_rate, run.num_steps, decay_note(run.accept_decay))
            : fmt::format(
                  "SGLang's draft tree with --accept-rate {:g} per depth (steps {}, topk {}, {} draft "
                  "tokens; default top-k coverage){}",
                  *run.accept_rate, run.num_steps, run.topk, run.num_draft_tokens, decay_note(run.accept_decay));
  } else if (m && same_draft_settings(run, *m)) {
    out.accept_len = m->measured_accept_len();
    out.accept_rate = m->accept_rate;
    out.accept_source = m->kind == AnchorKind::Cycle
                            ? fmt::format("measured with the {:g} tok/s ({})", m->measured, m->source)
                            : fmt::format("implied by the measured {:g} tok/s with {}", m->measured, m->taken_with);
  } else if (m) {
    out.accept_rate = m->accept_rate;
    out.accept_len = accept_len_at(m->accept_rate, run.num_steps, run.topk, run.num_draft_tokens, run.accept_decay);
    out.accept_source = fmt::format(
        "projected: per-token acceptance {:.3f} ({} the measured {:g} tok/s at {} steps) through {}{}", m->accept_rate,
        m->kind == AnchorKind::Cycle ? "measured with" : "implied by", m->measured, m->steps,
        m->topk == 1 && run.topk == 1 ? "the chain formula" : "SGLang's draft tree", decay_note(run.accept_decay));
  } else {
    throw InputError("accept length unknown: give --accept-len, --accept-rate or --measured-spec-tok-s",
                     "--accept-len");
  }
  if (out.accept_len > run.num_steps + 1 + 1e-9)
    throw InputError(fmt::format("accept len {:.2f} exceeds steps + 1 ({})", out.accept_len, run.num_steps + 1),
                     "--accept-len");
}

/// `s` with a scenario file's accept len carried as its per-token rate where the run's draft shape
/// differs from the one it was measured at (null: nothing to carry).
std::optional<Scenario> with_projected_accept(const Scenario& s) {
  const RunSpec& r = s.run;
  if (!r.speculative() || !r.accept_len || !r.accept_len_shape) return std::nullopt;
  const auto [steps, topk, tokens] = *r.accept_len_shape;
  if (steps == r.num_steps && topk == r.topk && tokens == r.num_draft_tokens) return std::nullopt;
  Scenario p = s;
  // a measurement the file holds at the run's own draft shape states its accept len: that one
  for (const MeasuredRun& m : s.measured)
    if (m.run.accept_len && m.run.num_steps == r.num_steps && m.run.topk == r.topk &&
        m.run.num_draft_tokens == r.num_draft_tokens) {
      p.run.accept_len = m.run.accept_len;
      p.run.accept_len_shape.reset();
      p.run.accept_source = fmt::format("{} (its measurement at steps {}, topk {}, {} draft tokens)",
                                        r.accept_source.empty() ? "scenario file" : r.accept_source, r.num_steps,
                                        r.topk, r.num_draft_tokens);
      return p;
    }
  p.run.accept_rate = accept_rate_at(*r.accept_len, steps, topk, tokens, r.accept_decay);
  p.run.accept_source =
      fmt::format("{} (its accept len {:g} at steps {}, topk {}, {} draft tokens, projected)",
                  r.accept_source.empty() ? "scenario file" : r.accept_source, *r.accept_len, steps, topk, tokens);
  p.run.accept_len.reset();
  p.run.accept_len_shape.reset();
  return p;
}

}  // namespace

namespace {

// How much of the cycle rests on host terms fitted to one published run rather than counted
// (models/runtime/*.json), unless a measured speculative run of this deployment anchors it.
void note_fitted_host(const Scenario& s, ScenarioResult& out) {
  if (!s.run.speculative() || !out.runtime.active || out.runtime.fitted_terms.empty()) return;
  // a cycle measured on this box replaces them (an accept len implied on another box does not)
  const std::string box = box_key(s.hw, s.run, s.target);
  for (const auto& e : out.anchor_report.entries)
    if (e.used && e.kind == AnchorKind::Cycle && e.box == box) return;
  const auto first = std::find_if(out.results.begin(), out.results.end(),
                                  [](const CycleResult& c) { return c.refused.empty() && c.cycle_us > 0; });
  if (first == out.results.end()) return;
  double fitted_us = 0;
  for (const auto k : {PhaseKind::DraftDecode, PhaseKind::Verify, PhaseKind::DraftExtend})
    if (const PhaseTiming* p = first->phase(k))
      fitted_us += p->count * out.runtime.phase[static_cast<int>(k)].fitted_host_us;
  out.fitted_host_share = fitted_us / first->cycle_us;
  if (out.fitted_host_share < 0.2) return;
  out.fitted_host_caution = fmt::format(
      "up to {:.0f}% of this cycle is host time of runtime terms fitted to published runs ({}), not counted from "
      "the code (before the overlap that hides part of it): {}. The profile describes {}; another release, GPU or "
      "model may pay otherwise. A measured "
      "speculative run of this deployment (--measured-spec-tok-s with its --accept-len) anchors the cycle",
      100 * out.fitted_host_share, fmt::join(out.runtime.fitted_sources, ", "),
      fmt::join(out.runtime.fitted_terms, ", "),
      s.runtime->applies_to.empty() ? "its own releases" : s.runtime->applies_to);
}

}  // namespace

ScenarioResult run_scenario(const Scenario& s) {
  if (auto p = with_projected_accept(s)) return run_scenario(*p);
  validate_run(s.run);
  const ModelSpec* draft = s.draft ? &*s.draft : nullptr;
  ScenarioResult out;
  out.plan = build_plan(s.target, draft, s.run);
  if (s.runtime) out.runtime = runtime_for(s, s.run, s.hw);

  const double given_accept = s.run.accept_len    ? *s.run.accept_len
                              : s.run.accept_rate ? accept_len_at(*s.run.accept_rate, s.run.num_steps, s.run.topk,
                                                                  s.run.num_draft_tokens, s.run.accept_decay)
                                                  : 0.0;
  out.anchors = derive_anchors(s, out.plan, given_accept, out.anchor_report);
  resolve_accept(s, out);

  {  // the reference baseline: NCCL everywhere, as measured
    const CostContext nccl{&s.hw,       &s.run,        AllReduceChoice{},
                           out.anchors, s.run.tp_size, out.runtime.active ? &out.runtime : nullptr};
    const double step_us = time_phase(*out.plan.find(PhaseKind::BaselineDecode), nccl).us;
    out.reference_baseline_tok_s = s.run.batch_size * 1e6 / step_us;
    const std::string run_box = box_key(s.hw, s.run, s.target);
    for (const auto& e : out.anchor_report.entries)
      if (e.kind == AnchorKind::Baseline && e.used && e.box == run_box && e.batch_size == s.run.batch_size &&
          std::abs(e.measured - out.reference_baseline_tok_s) <= 1e-6 * e.measured)
        (implied_source(e.source) ? out.reference_implied : out.reference_measured) = true;
  }

  for (const auto& backend : s.run.allreduce) {
    CostContext ctx{&s.hw, &s.run, backend, out.anchors, s.run.tp_size, out.runtime.active ? &out.runtime : nullptr};
    CycleResult r;
    if (const std::string why = refusal(out.plan, ctx); !why.empty()) {
      // Refused: an error when the user asked for this backend, a visible row when defaulted.
      if (!s.backends_defaulted) throw allreduce_refused(backend, why);
      r.backend = backend;
      r.refused = why;
      out.results.push_back(std::move(r));
      continue;
    }
    r = evaluate_cycle(out.plan, ctx, out.accept_len);
    r.backend_detail = backend_detail(out.plan, ctx);
    out.results.push_back(std::move(r));
  }
  note_fitted_host(s, out);
  return out;
}

}  // namespace specsim
