#include "engine/cycle_eval.h"

#include <algorithm>

namespace specsim {

const PhaseTiming* CycleResult::phase(PhaseKind k) const {
  for (const auto& p : phases)
    if (p.kind == k) return &p;
  return nullptr;
}

double typical_allreduce_bytes(const CyclePlan& plan) {
  const PhasePlan* p = plan.find(PhaseKind::Verify);
  if (!p) p = plan.find(PhaseKind::BaselineDecode);
  return p ? p->comm_bytes_of(OpKind::AllReduce) / std::max(1, p->count_of(OpKind::AllReduce)) : 0;
}

std::string refusal(const CyclePlan& plan, const CostContext& ctx) {
  if (ctx.world <= 1) return "";
  return allreduce_model(ctx.backend).refusal(allreduce_query(plan.max_comm_bytes_of(OpKind::AllReduce), ctx, true));
}

CycleResult evaluate_cycle(const CyclePlan& plan, const CostContext& ctx, double accept_len) {
  CycleResult r;
  r.backend = ctx.backend;
  r.phases.reserve(plan.phases.size());
  double ar_in_cycle = 0;
  for (const auto& p : plan.phases) {
    r.phases.push_back(time_phase(p, ctx));
    const auto& t = r.phases.back();
    if (p.kind == PhaseKind::BaselineDecode) {
      r.baseline_step_us = t.us;
    } else {
      r.cycle_us += t.count * t.us;
      ar_in_cycle += t.count * t.allreduce_us;
    }
  }
  const double bs = plan.batch;
  r.baseline_tok_s = r.baseline_step_us > 0 ? bs * 1e6 / r.baseline_step_us : 0;
  if (r.cycle_us > 0) {
    r.accept_len = accept_len;
    r.spec_tok_s = bs * accept_len * 1e6 / r.cycle_us;
    r.speedup = r.baseline_tok_s > 0 ? r.spec_tok_s / r.baseline_tok_s : 0;
    // spec = bs*A/cycle equals baseline = bs/step at A = cycle/step.
    r.breakeven_accept_len = r.baseline_step_us > 0 ? r.cycle_us / r.baseline_step_us : 0;
    r.allreduce_share = ar_in_cycle / r.cycle_us;
  }
  return r;
}

std::string backend_detail(const CyclePlan& plan, const CostContext& ctx) {
  if (ctx.world <= 1) return "tp 1: no all-reduce";
  // DP attention with an all-to-all MoE, say: the layers exchange tokens, not all-reduce them
  if (typical_allreduce_bytes(plan) <= 0) return "no all-reduce in the verify or the decode step of this layout";
  return allreduce_model(ctx.backend).describe(allreduce_query(typical_allreduce_bytes(plan), ctx, true));
}

}  // namespace specsim
