#pragma once
// One cycle evaluated for one all-reduce backend: per-phase timings, cycle time, tok/s.
#include <string>
#include <vector>

#include "engine/phase_timer.h"

namespace specsim {

struct CycleResult {
  AllReduceChoice backend;
  std::string backend_detail;  ///< e.g. "ring/LL over P2P" or "one-shot-push"
  std::string refused;         ///< non-empty: the backend cannot run here, and why
  std::vector<PhaseTiming> phases;
  double baseline_step_us = 0, baseline_tok_s = 0;
  double cycle_us = 0, spec_tok_s = 0, accept_len = 0, speedup = 0;
  double breakeven_accept_len = 0;  ///< accept len at which speculation matches the baseline
  double allreduce_share = 0;       ///< share of the cycle spent in all-reduces
  const PhaseTiming* phase(PhaseKind k) const;
};

/// Times every phase of the plan and derives the cycle figures. `accept_len` is ignored when the
/// plan has no speculation.
CycleResult evaluate_cycle(const CyclePlan& plan, const CostContext& ctx, double accept_len);

/// The payload of one verify all-reduce (the baseline step's without speculation), bytes.
double typical_allreduce_bytes(const CyclePlan& plan);

/// Why the context's backend cannot run this plan's all-reduces ("" when it can).
std::string refusal(const CyclePlan& plan, const CostContext& ctx);

/// The backend's own words for what it runs on the verify payload (for the report).
std::string backend_detail(const CyclePlan& plan, const CostContext& ctx);

}  // namespace specsim
