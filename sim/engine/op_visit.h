#pragma once
// The per-op rules of a forward, stated once for the phase timer (closed form) and the trace
// timeline (op by op): what each op costs, the switch gap before it, and the anchored overhead.
#include <cstddef>

#include "engine/op_cost.h"
#include "plan/cycle_plan.h"

namespace specsim {

/// The anchored unexplained per-forward time: it sits on target forwards (verify and the
/// baseline decode step), where the measured baseline revealed it.
inline double forward_overhead_us(const PhasePlan& phase, const CostContext& ctx) {
  return phase.kind == PhaseKind::Verify || phase.kind == PhaseKind::BaselineDecode ? ctx.anchors.forward_overhead_us
                                                                                    : 0.0;
}

/// Walks a phase's ops block by block with their costs and switch gaps. Collectives of one phase
/// all carry the same payload, so the last cost per collective kind is reused.
class OpVisitor {
 public:
  OpVisitor(const PhasePlan& phase, const CostContext& ctx) : phase_(phase), ctx_(ctx) {}

  /// Calls f(i, op, cost, gap_us) for each op of `block` in order, once per distinct op (the
  /// block's repeats are identical). gap_us is kernel_switch_us where the op's class differs
  /// from the one before it (the block's last op precedes its first), else 0.
  template <class F>
  void visit(const OpBlock& block, F&& f) {
    const std::size_t n = block.ops.size();
    if (n == 0) return;
    const double switch_us = n > 1 ? ctx_.hw->gpu.kernel_switch_us : 0.0;
    OpClass before = op_class(block.ops.back().kind);
    for (std::size_t i = 0; i < n; ++i) {
      const Op& op = block.ops[i];
      const OpClass cls = op_class(op.kind);
      const double gap = cls != before ? switch_us : 0.0;
      before = cls;
      f(i, op, cost(op), gap);
    }
  }

 private:
  struct Memo {
    double bytes = -1;
    OpCost cost;
  };
  OpCost cost(const Op& op) {
    if (op.kind != OpKind::AllReduce && op.kind != OpKind::AllGather) return op_cost(op, ctx_, phase_.graph);
    Memo& m = op.kind == OpKind::AllReduce ? ar_ : ag_;
    if (m.bytes != op.comm_bytes) m = {op.comm_bytes, op_cost(op, ctx_, phase_.graph)};
    return m.cost;
  }
  const PhasePlan& phase_;
  const CostContext& ctx_;
  Memo ar_, ag_;
};

}  // namespace specsim
