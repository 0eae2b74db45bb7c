#pragma once
// The per-op rules of a forward, stated once for the phase timer (closed form) and the trace
// timeline (op by op): what each op costs, the switch gap before it, and the anchored overhead.
#include <cstddef>
#include <functional>
#include <optional>

#include "engine/op_cost.h"
#include "plan/cycle_plan.h"

namespace specsim {

/// The anchored unexplained per-forward time: the measured baseline's sits on target forwards
/// (verify and the baseline decode step); a measured speculative cycle's on each draft forward
/// and on verify.
inline double forward_overhead_us(const PhasePlan& phase, const CostContext& ctx) {
  switch (phase.kind) {
    case PhaseKind::BaselineDecode: return ctx.anchors.forward_overhead_us;
    case PhaseKind::Verify: return ctx.anchors.forward_overhead_us + ctx.anchors.spec_verify_extra_us;
    case PhaseKind::DraftDecode: return ctx.anchors.spec_step_extra_us;
    case PhaseKind::DraftExtend: return ctx.anchors.spec_extend_extra_us;
  }
  return 0.0;
}

/// Walks a phase's ops block by block with their costs and switch gaps. Collectives of one phase
/// all carry the same payload, so the last cost per collective kind is reused.
class OpVisitor {
 public:
  OpVisitor(const PhasePlan& phase, const CostContext& ctx) : phase_(phase), ctx_(ctx) {
    // a backend scoped to other phases (`fixed:40@verify`) leaves this one on NCCL
    if (!ctx.backend.applies_to(phase.kind)) scoped_ = in_phase(ctx, phase.kind), ctx_ = *scoped_;
  }

  /// Calls f(i, op, cost, gap_us) for each op of `block` in order, once per distinct op (the
  /// block's repeats are identical). gap_us is kernel_switch_us where the op's class differs
  /// from the one before it (the block's last op precedes its first), else 0. An op fused into
  /// another kernel (fused_away: an add-norm the fused all-reduce absorbs, the MLA split merge
  /// inside FA3's call) is skipped: no kernel, no cost, no switch.
  template <class F>
  void visit(const OpBlock& block, F&& f) {
    const std::size_t n = block.ops.size();
    if (n == 0) return;
    const double switch_us = n > 1 ? ctx_.get().hw->gpu.kernel_switch_us : 0.0;
    OpClass before = op_class(block.ops.back().kind);
    for (std::size_t i = 0; i < n; ++i) {
      const Op& op = block.ops[i];
      if (fused_away(op, ctx_.get())) continue;
      const OpClass cls = op_class(op.kind);
      const double gap = cls != before ? switch_us : 0.0;
      before = cls;
      f(i, op, cost(op), gap);
    }
  }

 private:
  struct Memo {
    double bytes = -1;
    int group = -1;
    OpCost cost;
  };
  OpCost cost(const Op& op) {
    if (op.kind != OpKind::AllReduce && op.kind != OpKind::AllGather) return op_cost(op, ctx_.get(), phase_.graph);
    // a boundary all-reduce may be priced as the fused kernel: memoized apart from the others
    Memo& m = op.kind == OpKind::AllGather ? ag_ : op.fusable_boundary ? ar_fused_ : ar_;
    if (m.bytes != op.comm_bytes || m.group != op.group)
      m = {op.comm_bytes, op.group, op_cost(op, ctx_.get(), phase_.graph)};
    return m.cost;
  }
  const PhasePlan& phase_;
  std::optional<CostContext> scoped_;
  std::reference_wrapper<const CostContext> ctx_;  ///< the context with the backend this phase uses
  Memo ar_, ar_fused_, ag_;
};

}  // namespace specsim
