// Op preparation: picks how each op of a plan runs and sizes it (GEMM shape and cuBLASLt
// algorithm, the attention kernel's split-KV grid, memory-kernel vectors, collective elements).
#include "op_prep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "scenario/custom_ar_policy.h"

namespace specsim::replay::detail {
namespace {

std::int64_t at_least_1(double v) { return std::max<std::int64_t>(1, std::llround(v)); }

void prepare_gemm(const RankGpu& g, const Op& op, PreparedOp& p) {
  p.how = How::Gemm;
  GemmShape& s = p.gs;
  s.n = at_least_1(op.n), s.k = at_least_1(op.k);
  if (op.kind == OpKind::MoeGemm) {
    s.batch = at_least_1(op.experts);
    s.m = std::max<std::int64_t>(1, std::int64_t(std::ceil(op.m / double(s.batch))));
    p.meta.note = fmt::format("{} experts x [{},{}]x[{},{}], batched", s.batch, s.m, s.k, s.k, s.n);
  } else {
    s.batch = at_least_1(op.batch), s.m = at_least_1(op.m);
  }
  // fp8 checkpoints (DeepSeek-V3/R1, Kimi-K2: weight_block_size [128, 128]) run the block-scaled
  // kernel the stack runs for them; each weight slot holds W and then its block scales.
  if (op.dtype == DType::FP8 && g.fp8 && block_fp8_shape_ok({s.m, s.n, s.k, s.batch})) {
    s.fp8 = s.block_fp8 = true;
    p.meta.ran_dtype = DType::FP8, p.meta.block_fp8 = true;
    p.w_scale_offset = (s.weight_bytes() + 255) / 256 * 256;
    p.slot_bytes = p.w_scale_offset + BlockFp8Shape{s.m, s.n, s.k, s.batch}.w_scale_floats() * 4;
    const std::string how = "block-scaled fp8 kernel (128x128 weight scales, 1x128 token scales)";
    p.meta.note = p.meta.note.empty() ? how : p.meta.note + ", " + how;
    return;
  }
  if (op.dtype == DType::FP8 || op.dtype == DType::FP16 || op.dtype == DType::FP32) {
    s.fp8 = op.dtype == DType::FP8 && g.fp8 && s.k % 16 == 0 && s.n % 16 == 0;
    if (s.fp8) {
      p.gemm = std::make_unique<LtGemm>(g.lt, s);
      if (!p.gemm->ok()) s.fp8 = false;
    }
    if (!s.fp8) p.meta.note = fmt::format("{} GEMM ran as bf16", dtype_name(op.dtype));
  }
  if (!p.gemm || !p.gemm->ok()) p.gemm = std::make_unique<LtGemm>(g.lt, s);
  if (!p.gemm->ok())
    throw std::runtime_error(
        fmt::format("cuBLASLt has no algorithm for {} [{}x{}x{}] x{}", op.name, s.m, s.n, s.k, s.batch));
  p.meta.ran_dtype = s.fp8 ? DType::FP8 : DType::BF16;
  p.slot_bytes = s.weight_bytes();
}

void prepare_attention(const Op& op, PreparedOp& p) {
  p.how = How::Attention;
  const double elems = std::max(1.0, op.bytes / 2);
  const double rows = std::ceil(elems / kAttnRowElems);
  const auto chunks = std::size_t(std::ceil(rows / kAttnChunkRows));
  const double flops_per_tile = 4.0 * kAttnChunkRows * kAttnChunkRows * kAttnRowElems;  // QK^T + PV
  const int qtiles = int(std::max<std::int64_t>(1, std::llround(op.flops / (double(chunks) * flops_per_tile))));
  p.attn = plan_attention(chunks, qtiles);
  p.slot_bytes = chunks * kAttnChunkRows * kAttnRowElems * 2;
  p.meta.note = fmt::format("split-KV: {} rows x {} bf16 over {} CTAs, {} query tile(s) of 16 on tensor cores{}",
                            chunks * kAttnChunkRows, kAttnRowElems, p.attn.ctas, qtiles,
                            p.attn.groups > 1 ? fmt::format(", KV read by {} query groups", p.attn.groups) : "");
}

// A layer boundary's all-reduce that custom:fused runs fused with the add + RMSNorm: the engine's
// rule (engine/op_cost.cc boundary_fusion), with the kernel's own limits.
bool fused_boundary(const RankGpu& g, const Op& op, double ar_bytes) {
  return g.car != nullptr && g.car_fused && op.fusable_boundary &&
         car_policy::fused_boundary_fits(ar_bytes, op.rows, double(car_policy::kLlMaxBytes),
                                         double(car::kFusedMaxHidden));
}

void prepare_fused(const RankGpu& g, const Op& op, PreparedOp& p) {
  if (op.rows == 0 || p.elems % op.rows != 0)
    throw std::logic_error(fmt::format("{}: a layer boundary's all-reduce without its rows", op.name));
  p.how = How::AllReduceFused;
  p.fused.tokens = op.rows;
  p.fused.hidden = p.elems / op.rows;
  p.fused.dtype = car::DType::BF16;
  if (p.elems * 2 > g.car->max_bytes())  // the buffer is 8 MiB, or the plan's largest all-reduce
    throw std::logic_error(fmt::format("{}: {} B over the custom all-reduce's buffer", op.name, p.elems * 2));
  p.meta.note = fmt::format("custom all-reduce fused with the residual add and RMSNorm ({}, {} x {})",
                            car::to_string(g.car->fused_geometry(p.fused).variant), p.fused.tokens, p.fused.hidden);
}

void prepare_allreduce(const RankGpu& g, const Op& op, PreparedOp& p) {
  // bf16 payload, out of place (so repeated replays do not grow the values)
  p.elems = std::size_t(std::max(1.0, std::ceil(op.comm_bytes / 2)));
  if (fused_boundary(g, op, op.comm_bytes)) return prepare_fused(g, op, p);
  p.how = How::AllReduceNccl;
  if (g.car && p.elems * 2 <= g.car->max_bytes()) {
    p.how = How::AllReduceCustom;
    p.meta.note = fmt::format("custom all-reduce, {}", car::to_string(g.car->resolve(g.car_variant, p.elems * 2)));
  } else {
    p.meta.note = g.car ? "over the custom all-reduce's buffer: NCCL" : "NCCL";
  }
  if (p.how == How::AllReduceNccl && !g.nccl)  // ranks sharing a GPU run no NCCL
    throw std::runtime_error(
        fmt::format("{}: a {} B all-reduce needs NCCL (or a custom all-reduce buffer that "
                    "large), and this replay has no NCCL communicator",
                    op.name, p.elems * 2));
}

}  // namespace

// an add-norm reads x and residual and writes both: 4 x its all-reduce's bytes (as the engine)
bool norm_fused_away(const RankGpu& g, const Op& op) {
  return op.kind == OpKind::Norm && fused_boundary(g, op, op.bytes / 4.0);
}

PreparedOp prepare_op(const RankGpu& g, const Op& op, const OpBlock& b) {
  PreparedOp p;
  p.op = &op;
  p.meta.block = b.name, p.meta.name = op.name, p.meta.repeat = b.repeat;
  p.meta.op = op, p.meta.op.name = "";
  p.meta.ran_dtype = op.kind == OpKind::Gemm || op.kind == OpKind::MoeGemm ? op.dtype : DType::BF16;
  switch (op.kind) {
    case OpKind::Gemm:
    case OpKind::MoeGemm: prepare_gemm(g, op, p); break;
    case OpKind::Attention: prepare_attention(op, p); break;
    case OpKind::AllReduce: prepare_allreduce(g, op, p); break;
    case OpKind::AllGather:
      p.how = How::AllGather;
      p.elems = std::size_t(std::max(1.0, std::ceil(op.comm_bytes / 2 / std::max(1, g.world))));
      p.meta.note = "NCCL all-gather";
      if (!g.nccl)
        throw std::runtime_error(
            fmt::format("{}: an all-gather needs NCCL, and this replay has no NCCL communicator", op.name));
      break;
    default:
      p.how = How::Memory;
      p.vec16 = std::size_t(std::max(1.0, std::ceil(op.bytes / 2 / 16)));  // half read, half written
      break;
  }
  return p;
}

}  // namespace specsim::replay::detail
