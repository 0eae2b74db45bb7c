#include "plan/expert_parallel.h"

#include <algorithm>

#include "plan/cycle_plan.h"
#include "plan/op_builders.h"

namespace specsim {
using namespace ops;

double a2a_token_bytes(A2aBackend b, bool combine, double hidden) {
  if (combine || b != A2aBackend::DeepEP) return hidden * kActBytes;
  return hidden * (1.0 + 4.0 / 128.0);  // fp8 values + one fp32 scale per 128
}

double ep_rank_pairs(const ModelSpec& m, const EpMoeShape& s) {
  return s.group_tokens * m.moe.experts_per_token / s.layout.ep * s.layout.ep_imbalance;
}

namespace {

// fp8 (block-scaled) and NVFP4 GEMMs take quantized activations: one kernel before each.
void ep_quant(std::vector<Op>& ops, DType w, double t, double k) {
  if (w == DType::FP8) ops.push_back(small("act_quant", OpKind::Elementwise, t * k * (kActBytes + 1.0)));
  if (w == DType::NVFP4) ops.push_back(small("act_quant", OpKind::Elementwise, t * k * (kActBytes + dtype_bytes(w))));
}

}  // namespace

void ep_moe_ops(std::vector<Op>& ops, const ModelSpec& m, DType w, DType ew, const EpMoeShape& s) {
  const auto& e = m.moe;
  const double h = m.hidden, t = s.own_tokens;
  const ParallelLayout& l = s.layout;
  const bool a2a = l.a2a != A2aBackend::None;
  const double il = double(e.intermediate) * l.ep / s.tp;  // each expert split tp / ep ways
  ops.push_back(gemm("router_gate", t, e.routed_experts, h, DType::BF16, /*replicated=*/true));
  ops.push_back(small("topk_select", OpKind::Elementwise, t * e.routed_experts * 4.0));
  if (a2a) ops.push_back(all_to_all("moe_dispatch", t * e.experts_per_token * a2a_token_bytes(l.a2a, false, h), false));
  const double pairs = ep_rank_pairs(m, s);
  const double held = double(e.routed_experts) / l.ep;
  // the busiest rank touches its share of the distinct experts, scaled alike, at most all it holds
  const double distinct =
      std::min(held, expected_distinct_experts(s.group_tokens * s.routed_share, e.routed_experts, e.experts_per_token) /
                         l.ep * l.ep_imbalance);
  ops.push_back(small("moe_align", OpKind::Elementwise, pairs * 8.0));
  ep_quant(ops, ew, pairs, h);
  ops.push_back(moe_gemm("moe_w13", pairs, distinct, 2 * il, h, ew));
  ops.push_back(small("silu_and_mul", OpKind::Elementwise, 3.0 * pairs * il * kActBytes));
  ep_quant(ops, ew, pairs, il);
  ops.push_back(moe_gemm("moe_w2", pairs, distinct, h, il, ew));
  if (a2a)  // the combine sums each token's top-k outputs on the way back
    ops.push_back(all_to_all("moe_combine", t * e.experts_per_token * a2a_token_bytes(l.a2a, true, h), true));
  else
    ops.push_back(small("moe_sum", OpKind::Elementwise, pairs * h * kActBytes + t * h * kActBytes));
  if (e.shared_experts > 0) {
    const double si = double(e.intermediate) * e.shared_experts / (a2a ? 1 : s.tp);
    ep_quant(ops, w, t, h);
    ops.push_back(gemm("shared_gate_up_proj", t, 2 * si, h, w, /*replicated=*/a2a));
    ops.push_back(small("shared_silu_and_mul", OpKind::Elementwise, 3.0 * t * si * kActBytes));
    ep_quant(ops, w, t, si);
    ops.push_back(gemm("shared_down_proj", t, h, si, w, /*replicated=*/a2a));
  }
}

}  // namespace specsim
