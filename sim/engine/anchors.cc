#include "engine/anchors.h"

#include <fmt/format.h>

#include "engine/accept.h"
#include "engine/cycle_eval.h"
#include "util/error.h"

namespace specsim {

Anchors derive_anchors(const CyclePlan& plan, const Hardware& hw, const RunSpec& run, AnchorReport& rep,
                       const RuntimeCost* runtime) {
  Anchors a;
  CostContext ctx{&hw, &run, AllReduceChoice{}, a, run.tp_size, runtime};
  rep = AnchorReport{};

  if (run.measured_allreduce_us) {
    const PhasePlan* p = plan.find(PhaseKind::Verify);
    if (!p) p = plan.find(PhaseKind::BaselineDecode);
    if (!p || p->count_of(OpKind::AllReduce) == 0)
      throw InputError("there is no all-reduce to anchor at tp 1", "--measured-allreduce-us");
    const double bytes = p->comm_bytes_of(OpKind::AllReduce) / p->count_of(OpKind::AllReduce);
    rep.allreduce = true;
    rep.allreduce_phase = p->kind;
    rep.allreduce_graph = p->graph;
    rep.allreduce_bytes = bytes;
    rep.allreduce_model_us = allreduce_us(bytes, ctx, p->graph);
    rep.allreduce_measured_us = *run.measured_allreduce_us;
    const double extra = rep.allreduce_measured_us - rep.allreduce_model_us;
    (p->graph ? a.nccl_extra_graph_us : a.nccl_extra_eager_us) = extra;
    ctx.anchors = a;
  }
  if (run.measured_baseline_tok_s) {
    const PhasePlan* p = plan.find(PhaseKind::BaselineDecode);
    rep.baseline = true;
    rep.baseline_model_us = time_phase(*p, ctx).us;
    rep.baseline_measured_us = plan.batch * 1e6 / *run.measured_baseline_tok_s;
    a.forward_overhead_us = rep.baseline_measured_us - rep.baseline_model_us;
    ctx.anchors = a;
  }
  if (run.measured_spec_tok_s) {
    const CycleResult r = evaluate_cycle(plan, ctx, 1.0);
    rep.spec = true;
    rep.spec_measured_tok_s = *run.measured_spec_tok_s;
    rep.spec_cycle_us = r.cycle_us;
    rep.implied_accept_len = *run.measured_spec_tok_s * r.cycle_us / 1e6 / plan.batch;
    rep.measured_steps = run.num_steps, rep.measured_topk = run.topk, rep.measured_draft_tokens = run.num_draft_tokens;
    if (rep.implied_accept_len < 1.0 || rep.implied_accept_len > run.num_draft_tokens)
      throw InputError(fmt::format("{:g} tok/s with a modelled cycle of {:.0f} us implies accept len {:.2f}, outside "
                                   "[1, {}]: check the measurement or the anchors",
                                   *run.measured_spec_tok_s, r.cycle_us, rep.implied_accept_len, run.num_draft_tokens),
                       "--measured-spec-tok-s");
    rep.implied_accept_rate = chain_accept_rate(rep.implied_accept_len, run.num_steps);
  }
  return a;
}

}  // namespace specsim
