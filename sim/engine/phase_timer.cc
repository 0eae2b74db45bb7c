#include "engine/phase_timer.h"

#include <algorithm>

#include "engine/op_visit.h"

namespace specsim {

namespace {

// The GPU's lag behind the host (end of the last kernel minus the last launch) evolves as
// lag' = max(lag + a, b) per kernel, with a = gpu - host and b = gpu: a max-plus map. Maps
// compose to the same form, so a layer repeated r times is one map, and a phase is one map.
struct LagMap {
  double a = 0;       ///< added to the incoming lag
  double b = -1e300;  ///< floor
  double host = 0;    ///< host time spent launching
  void then(double a2, double b2, double host2) {
    b = std::max(b + a2, b2);
    a += a2;
    host += host2;
  }
  LagMap repeated(int r) const {
    LagMap m;
    m.a = r * a;
    m.b = b + std::max(0.0, (r - 1) * a);
    m.host = r * host;
    return m;
  }
};

}  // namespace

PhaseTiming time_phase(const PhasePlan& phase, const CostContext& ctx) {
  PhaseTiming t;
  t.kind = phase.kind;
  t.count = phase.count;
  t.tokens = phase.tokens;
  t.graph = phase.graph;
  LagMap total;
  OpVisitor ops(phase, ctx);
  for (const auto& block : phase.blocks) {
    LagMap m;
    double gemm = 0, attn = 0, ar = 0, ag = 0, other = 0, ar_bytes = 0, ag_bytes = 0, a2a = 0, a2a_bytes = 0;
    double p2p = 0, p2p_bytes = 0;
    int n_ar = 0, n_ag = 0, n_a2a = 0, n_p2p = 0, launched = 0;
    double switches = 0;
    ops.visit(block, [&](std::size_t, const Op& op, const OpCost& c, double gap) {
      // A switch gap delays a kernel that follows its predecessor back to back; an eager kernel
      // that waits for its launch (b) starts on an idle GPU and pays none.
      switches += gap;
      ++launched;  // fused_away ops are not visited: no kernel of their own
      m.then(c.gpu_us + gap - c.host_us, c.gpu_us, c.host_us);
      switch (op_class(op.kind)) {
        case OpClass::Gemm: gemm += c.gpu_us; break;
        case OpClass::Attention: attn += c.gpu_us; break;
        case OpClass::AllReduce: ar += c.gpu_us, ar_bytes += op.comm_bytes, ++n_ar; break;
        case OpClass::AllGather: ag += c.gpu_us, ag_bytes += op.comm_bytes, ++n_ag; break;
        case OpClass::AllToAll: a2a += c.gpu_us, a2a_bytes += op.comm_bytes, ++n_a2a; break;
        case OpClass::P2P: p2p += c.gpu_us, p2p_bytes += op.comm_bytes, ++n_p2p; break;
        case OpClass::Other: other += c.gpu_us; break;
      }
    });
    const double r = block.repeat;
    t.gemm_us += r * gemm, t.attention_us += r * attn, t.allreduce_us += r * ar, t.allgather_us += r * ag;
    t.other_us += r * other;
    t.allreduce_count += block.repeat * n_ar, t.allgather_count += block.repeat * n_ag;
    t.allreduce_bytes += r * ar_bytes, t.allgather_bytes += r * ag_bytes;
    t.alltoall_us += r * a2a, t.alltoall_bytes += r * a2a_bytes, t.alltoall_count += block.repeat * n_a2a;
    t.p2p_us += r * p2p, t.p2p_bytes += r * p2p_bytes, t.p2p_count += block.repeat * n_p2p;
    t.kernels += block.repeat * launched;
    t.switch_us += r * switches;
    const LagMap rep = m.repeated(block.repeat);
    total.then(rep.a, rep.b, rep.host);
  }
  const double gpu =
      t.gemm_us + t.attention_us + t.allreduce_us + t.allgather_us + t.alltoall_us + t.p2p_us + t.other_us;
  if (phase.graph) {
    t.launch_us = ctx.hw->gpu.graph_launch_us + t.switch_us;
  } else {
    const double lag = std::max(total.a, total.b);  // the GPU starts idle: incoming lag 0
    t.launch_us = std::max(0.0, total.host + lag - gpu);
    t.switch_us = 0;  // eager: the gaps that show are inside launch_us with the host waits
  }
  t.overhead_us = forward_overhead_us(phase, ctx);
  t.us = gpu + t.launch_us + t.overhead_us;
  if (ctx.runtime) {
    const PhaseRuntime& rt = ctx.runtime->phase[static_cast<int>(phase.kind)];
    t.runtime_host_us = rt.host_us;
    t.runtime_gpu_us = rt.gpu_eager_us + rt.gpu_graphed_us;
    t.spec_overhead_us = rt.exposed_us(t.us);
    t.us += t.spec_overhead_us;
  }
  return t;
}

}  // namespace specsim
