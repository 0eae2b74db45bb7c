#include "engine/op_cost.h"

#include <algorithm>
#include <cstdint>

#include "cost/allreduce_fusion.h"
#include "cost/allreduce_model.h"
#include "cost/compute_cost.h"
#include "cost/deepep_model.h"
#include "cost/nccl_alltoall.h"
#include "cost/nccl_model.h"
#include "cost/nccl_p2p.h"
#include "scenario/custom_ar_policy.h"

namespace specsim {

AllReduceQuery allreduce_query(double bytes, const CostContext& ctx, bool graph) {
  return AllReduceQuery{bytes, ctx.world, graph, ctx.hw, &ctx.run->nccl, &ctx.backend};
}

double allreduce_us(double bytes, const CostContext& ctx, bool graph) {
  if (ctx.world <= 1) return 0;
  const AllReduceModel& model = allreduce_model(ctx.backend);
  const AllReduceQuery q = allreduce_query(bytes, ctx, graph);
  double us = model.time_us(q);
  if (!model.floored()) return us;  // a stated latency, as given
  if (model.nccl_anchored(q)) us += graph ? ctx.anchors.nccl_extra_graph_us : ctx.anchors.nccl_extra_eager_us;
  return std::max(us, ctx.hw->gpu.kernel_min_us);
}

CostContext in_phase(const CostContext& ctx, PhaseKind phase) {
  if (ctx.backend.applies_to(phase)) return ctx;
  CostContext c = ctx;
  c.backend = AllReduceChoice{};
  return c;
}

namespace {
/// The fused kernel a boundary whose all-reduce moves `ar_bytes` over `rows` tokens runs as, if
/// any. Ours runs rows of bf16 up to its byte cap and hidden size, a multiple of 8 elements.
enum class Fusion { None, FlashInfer, Custom };
Fusion boundary_fusion(double ar_bytes, std::uint16_t rows, const CostContext& ctx) {
  if (ctx.world <= 1) return Fusion::None;
  if (ctx.run->flashinfer_fusion) return Fusion::FlashInfer;
  const AllReduceFusionModel& m = allreduce_fusion_model();
  if (ctx.backend.fused_norm &&
      car_policy::fused_boundary_fits(ar_bytes, rows, m.custom_max_bytes, m.custom_max_hidden))
    return Fusion::Custom;
  return Fusion::None;
}
}  // namespace

bool fused_away(const Op& op, const CostContext& ctx) {
  // the MLA split merge where FA3's measured call, which includes its combine kernel, prices the attention
  if (op.kind != OpKind::Attention && op.attention_kernel == AttentionKernel::Fa3Mla)
    return ctx.hw->gpu.price_stack_attention;
  // an add-norm reads x and residual and writes both (forward_builders.cc add_norm): 4 x the all-reduce's bytes
  return op.kind == OpKind::Norm && op.fusable_boundary &&
         boundary_fusion(op.bytes / 4.0, op.rows, ctx) != Fusion::None;
}

bool follows_other_class(const OpBlock& block, std::size_t i) {
  const std::size_t n = block.ops.size();
  return n >= 2 && op_class(block.ops[i].kind) != op_class(block.ops[(i + n - 1) % n].kind);
}

double alltoall_us(const Op& op, const CostContext& ctx) {
  if (ctx.world <= 1) return 0;
  const ParallelLayout& l = ctx.run->layout;
  const double us = l.a2a == A2aBackend::DeepEP
                        ? deepep_model().us(op.comm_bytes, ctx.world, op.combine, l.low_latency())
                        : nccl_alltoall_us(op.comm_bytes, ctx.world, *ctx.hw, ctx.run->nccl);
  return std::max(us, ctx.hw->gpu.kernel_min_us);
}

OpCost op_cost(const Op& op, const CostContext& ctx, bool graph) {
  if (op.is_collective() && op.group > 0 && op.group != ctx.world) {  // a DP rank's attention group
    CostContext in_group = ctx;
    in_group.world = op.group;
    Op whole = op;
    whole.group = 0;
    return op_cost(whole, in_group, graph);
  }
  const auto& gpu = ctx.hw->gpu;
  OpCost c;
  switch (op.kind) {
    case OpKind::AllReduce:
      c.gpu_us = allreduce_us(op.comm_bytes, ctx, graph);
      c.host_us = allreduce_model(ctx.backend).host_us(allreduce_query(op.comm_bytes, ctx, graph));
      if (op.fusable_boundary) switch (boundary_fusion(op.comm_bytes, op.rows, ctx)) {
          case Fusion::FlashInfer:
            c.gpu_us = std::max(allreduce_fusion_model().flashinfer_us(op.comm_bytes, ctx.world), gpu.kernel_min_us);
            break;
          case Fusion::Custom: c.gpu_us += allreduce_fusion_model().custom_extra_for(op.rows); break;
          case Fusion::None: break;
        }
      break;
    case OpKind::AllGather:  // logits all-gathers go through NCCL whatever the all-reduce backend
      c.gpu_us = ctx.world <= 1
                     ? 0
                     : std::max(nccl_allgather(op.comm_bytes, ctx.world, *ctx.hw, ctx.run->nccl).us, gpu.kernel_min_us);
      c.host_us = gpu.nccl_host_launch_us;
      break;
    case OpKind::ReduceScatter:
      c.gpu_us = ctx.world <= 1 ? 0
                                : std::max(nccl_reduce_scatter_us(op.comm_bytes, ctx.world, *ctx.hw, ctx.run->nccl),
                                           gpu.kernel_min_us);
      c.host_us = gpu.nccl_host_launch_us;
      break;
    case OpKind::AllToAll:
      c.gpu_us = alltoall_us(op, ctx);
      c.host_us = ctx.run->layout.a2a == A2aBackend::DeepEP ? gpu.host_launch_us : gpu.nccl_host_launch_us;
      break;
    case OpKind::SendRecv: {
      // every rank of the stage sends to its peer at once: they share the node's NICs
      const int senders = std::min(ctx.world, ctx.hw->gpus_per_node());
      c.gpu_us =
          std::max(nccl_p2p_us(op.comm_bytes, op.inter_node, senders, *ctx.hw, ctx.run->nccl), gpu.kernel_min_us);
      c.host_us = gpu.nccl_host_launch_us;
      break;
    }
    default: c.gpu_us = compute_us(op, gpu); c.host_us = gpu.host_launch_us;
  }
  return c;
}

}  // namespace specsim
