#pragma once
// The one place an Op becomes time: GPU microseconds and the host's launch cost, for a chosen
// all-reduce backend and the anchors derived from measurements.
#include "cost/allreduce_model.h"
#include "cost/runtime_cost.h"
#include "plan/cycle_plan.h"
#include "plan/op.h"
#include "scenario/hardware.h"
#include "scenario/run_spec.h"

namespace specsim {

/// What measurements told us beyond the model (see anchors.h): extra time per NCCL all-reduce in
/// eager and in graph mode, and the unexplained host/scheduler time per target forward.
struct Anchors {
  double nccl_extra_eager_us = 0;
  double nccl_extra_graph_us = 0;
  double forward_overhead_us = 0;
  /// A measured speculative run with its accept len: the cycle time the model does not explain,
  /// per draft decode forward, per draft extend forward and per verify.
  double spec_step_extra_us = 0;    ///< per draft decode forward
  double spec_extend_extra_us = 0;  ///< per draft extend forward
  double spec_verify_extra_us = 0;
};

/// Everything op_cost needs besides the op.
struct CostContext {
  const Hardware* hw = nullptr;
  const RunSpec* run = nullptr;
  AllReduceChoice backend;
  Anchors anchors;
  int world = 1;                         ///< tensor-parallel group size
  const RuntimeCost* runtime = nullptr;  ///< the serving runtime's own work; null: forwards only
};

struct OpCost {
  double gpu_us = 0;   ///< time the op occupies the GPU
  double host_us = 0;  ///< host time to launch it eagerly (unused inside a CUDA graph)
};

/// Whether op `i` of `block` follows an op of another class in the repeated layer (the block's
/// last op precedes its first); a one-op block never switches.
bool follows_other_class(const OpBlock& block, std::size_t i);

/// The context a phase runs in: a backend scoped to other phases (`fixed:40@verify`) leaves
/// this one on NCCL, as measured.
CostContext in_phase(const CostContext& ctx, PhaseKind phase);

/// Whether `op` is a layer boundary's add-norm that the fused all-reduce kernel absorbs in this
/// context (--enable-flashinfer-allreduce-fusion, or --allreduce custom:fused within its caps):
/// it is not launched, and its all-reduce is priced as the fused kernel (op_cost). Also the MLA
/// split merge where FA3's measured MLA call (which includes its combine) prices the attention.
bool fused_away(const Op& op, const CostContext& ctx);

/// Cost of one op in a phase that runs from a graph (`graph`) or eagerly.
OpCost op_cost(const Op& op, const CostContext& ctx, bool graph);

/// The question put to the backend's model for one all-reduce of `bytes` in this context.
AllReduceQuery allreduce_query(double bytes, const CostContext& ctx, bool graph);

/// One MoE dispatch or combine in this context's group: DeepEP's tables or NCCL's all-to-all
/// (the run's --moe-a2a-backend), at least the GPU's kernel minimum, microseconds.
double alltoall_us(const Op& op, const CostContext& ctx);

/// The all-reduce time alone (the backend's model plus NCCL anchors), microseconds.
double allreduce_us(double bytes, const CostContext& ctx, bool graph);

}  // namespace specsim
