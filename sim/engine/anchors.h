#pragma once
// Anchoring the model to what a user measured. Measurements are taken at some settings (the
// "measured run", NCCL all-reduce); what they reveal beyond the model is kept as Anchors and
// carried into every what-if:
//  - --measured-allreduce-us: the NCCL all-reduce in verify (in the decode step without
//    speculation). measured - model = extra per NCCL all-reduce in that execution mode (eager or
//    graph), e.g. rank skew and host synchronisation of eager NCCL.
//  - --measured-baseline-tok-s: measured step - modelled step = unexplained time per target
//    forward (scheduler, sampling, Python), added to every baseline step and verify.
//  - --measured-spec-tok-s: with the cycle time, implies the accept len, and through the chain
//    formula a per-token acceptance rate that projects to other draft settings.
#include "engine/op_cost.h"
#include "plan/cycle_plan.h"

namespace specsim {

struct AnchorReport {
  bool allreduce = false;
  PhaseKind allreduce_phase = PhaseKind::Verify;
  bool allreduce_graph = false;
  double allreduce_model_us = 0, allreduce_measured_us = 0, allreduce_bytes = 0;
  bool baseline = false;
  double baseline_model_us = 0, baseline_measured_us = 0;
  bool spec = false;
  double spec_measured_tok_s = 0, spec_cycle_us = 0, implied_accept_len = 0, implied_accept_rate = 0;
  int measured_steps = 0, measured_topk = 0, measured_draft_tokens = 0;
  bool any() const { return allreduce || baseline || spec; }
};

/// Derives the anchors from `measured` (its measured_* fields) on its own plan.
/// InputError when a measurement is impossible under the model (e.g. implied accept len > N).
Anchors derive_anchors(const CyclePlan& measured_plan, const Hardware& hw, const RunSpec& measured,
                       AnchorReport& report, const RuntimeCost* runtime = nullptr);

}  // namespace specsim
