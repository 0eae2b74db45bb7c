#include "engine/scenario.h"

#include <fmt/format.h>

#include "engine/accept.h"
#include "util/error.h"

namespace specsim {

namespace {

bool same_draft_settings(const RunSpec& a, const AnchorReport& r) {
  return a.num_steps == r.measured_steps && a.topk == r.measured_topk && a.num_draft_tokens == r.measured_draft_tokens;
}

void resolve_accept(const Scenario& s, ScenarioResult& out) {
  const RunSpec& run = s.run;
  if (!run.speculative()) return;
  const auto& rep = out.anchor_report;
  if (run.accept_len) {
    out.accept_len = *run.accept_len;
    out.accept_source = "given (--accept-len)";
  } else if (run.accept_rate) {
    out.accept_rate = *run.accept_rate;
    out.accept_len = chain_accept_len(*run.accept_rate, run.num_steps);
    out.accept_source =
        fmt::format("chain formula with --accept-rate {:g} over {} steps", *run.accept_rate, run.num_steps);
  } else if (rep.spec && same_draft_settings(run, rep)) {
    out.accept_len = rep.implied_accept_len;
    out.accept_rate = rep.implied_accept_rate;
    out.accept_source = fmt::format("implied by the measured {:g} tok/s with NCCL", rep.spec_measured_tok_s);
  } else if (rep.spec) {
    out.accept_rate = rep.implied_accept_rate;
    out.accept_len = chain_accept_len(rep.implied_accept_rate, run.num_steps);
    out.accept_source = fmt::format(
        "projected: per-token acceptance {:.3f} (implied by the measured {:g} tok/s at {} steps) through the chain "
        "formula",
        rep.implied_accept_rate, rep.spec_measured_tok_s, rep.measured_steps);
  } else {
    throw InputError("accept length unknown: give --accept-len, --accept-rate or --measured-spec-tok-s",
                     "--accept-len");
  }
  if (out.accept_len > run.num_draft_tokens + 1e-9)
    throw InputError(fmt::format("accept len {:.2f} exceeds the {} draft tokens", out.accept_len, run.num_draft_tokens),
                     "--accept-len");
}

}  // namespace

RuntimeCost runtime_for(const Scenario& s, const RunSpec& run, const Hardware& hw) {
  if (!s.runtime) return {};
  const int draft_vocab = s.draft ? (s.draft->draft_vocab > 0 ? s.draft->draft_vocab : s.draft->vocab) : 0;
  return runtime_cost(*s.runtime, run, hw, s.target.vocab, draft_vocab);
}

ScenarioResult run_scenario(const Scenario& s) {
  validate_run(s.run);
  const ModelSpec* draft = s.draft ? &*s.draft : nullptr;
  ScenarioResult out;
  out.plan = build_plan(s.target, draft, s.run);
  if (s.runtime) out.runtime = runtime_for(s, s.run, s.hw);

  const bool measured_elsewhere = s.measured.has_value();
  const RunSpec& mrun = measured_elsewhere ? *s.measured : s.run;
  if (mrun.measured_allreduce_us || mrun.measured_baseline_tok_s || mrun.measured_spec_tok_s) {
    if (measured_elsewhere) {
      validate_run(mrun);
      const CyclePlan mplan = build_plan(s.target, draft, mrun);
      const Hardware& mhw = s.measured_hw ? *s.measured_hw : s.hw;
      const RuntimeCost mrt = s.runtime ? runtime_for(s, mrun, mhw) : RuntimeCost{};
      out.anchors = derive_anchors(mplan, mhw, mrun, out.anchor_report, mrt.active ? &mrt : nullptr);
      if (s.anchor_accept_only) {  // box-specific anchors stay with the measured box
        out.anchors = Anchors{};
        out.anchor_report.allreduce = out.anchor_report.baseline = false;
      }
    } else {
      out.anchors =
          derive_anchors(out.plan, s.hw, mrun, out.anchor_report, out.runtime.active ? &out.runtime : nullptr);
    }
  }
  resolve_accept(s, out);

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
  return out;
}

}  // namespace specsim
