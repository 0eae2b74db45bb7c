#pragma once
// One kernel of a forward, with the shapes, FLOPs and bytes the cost model and the replay need.
#include <cstdint>
#include <string_view>

#include "scenario/dtype.h"

namespace specsim {

enum class OpKind : std::uint8_t {
  Gemm,           ///< C[m,n] = A[m,k] x W[k,n], `batch` independent products (batch > 1: per-head BMM)
  MoeGemm,        ///< grouped expert GEMM: `experts` distinct weight matrices [k,n], m = tokens routed in all
  Attention,      ///< decode/verify attention reading the KV cache
  Norm,           ///< RMSNorm (often fused with the residual add)
  Elementwise,    ///< rotary, activation, quantization, sampling, cache stores ...
  AllReduce,      ///< sum across the tensor-parallel group, `comm_bytes` per rank
  AllGather,      ///< gather across the group, `comm_bytes` = the gathered output
  AllToAll,       ///< MoE dispatch or combine: `comm_bytes` = what this rank sends (every destination, itself too)
  ReduceScatter,  ///< sum across the group, each rank keeping its share; `comm_bytes` = one rank's input
  SendRecv,       ///< pipeline stage boundary: each rank sends `comm_bytes` to its peer in the next stage
};

/// The report's columns: every op kind falls in one.
/// A reduce-scatter is in the AllGather class (its mirror image: the same bus traffic).
enum class OpClass : std::uint8_t { Gemm, Attention, AllReduce, AllGather, AllToAll, P2P, Other };
constexpr OpClass op_class(OpKind k) {
  switch (k) {
    case OpKind::Gemm:
    case OpKind::MoeGemm: return OpClass::Gemm;
    case OpKind::Attention: return OpClass::Attention;
    case OpKind::AllReduce: return OpClass::AllReduce;
    case OpKind::AllGather:
    case OpKind::ReduceScatter: return OpClass::AllGather;
    case OpKind::AllToAll: return OpClass::AllToAll;
    case OpKind::SendRecv: return OpClass::P2P;
    default: return OpClass::Other;
  }
}
std::string_view op_kind_name(OpKind k);

/// Which kernel prices an attention op. Roofline: the GPU profile's attention terms (fitted to the
/// GPU replay's own split-KV kernel, what the replay runs). The others are FlashInfer's kernels as
/// SGLang's FlashInfer backend runs them, priced by their measured times
/// (models/kernels/flashinfer_attention.json): the paged prefill (a verify, a draft extend), the
/// extra time of its custom mask (a verify's tree, the op attention_custom_mask), batch decode on
/// CUDA cores and on tensor cores (SGLang's choice past 4 query heads a KV head). Fa3: FA3's
/// paged-KV kernel as SGLang's FA3 backend calls it (models/kernels/fa3_attention.json); Fa3Mla:
/// the same for an MLA model's absorbed call (its `fa3_mla` terms), and on the MLA split merge,
/// which that call's measured time includes (not launched while the stack's price applies).
enum class AttentionKernel : std::uint8_t {
  Roofline,
  FlashInferPrefill,
  FlashInferMask,
  FlashInferDecode,
  FlashInferDecodeTc,
  Fa3,
  Fa3Mla
};

struct Op {
  // Doubles first, the small fields packed after them: 88 bytes where interleaving took 104 (the
  // engine walks thousands of ops a cycle evaluation).
  const char* name = "";  ///< what SGLang calls it (q_b_proj, moe_w13, ...)
  /// GEMM shape per product (MoE: m = routed token-expert pairs). Attention: m = query tokens; on
  /// FlashInfer's kernels n = requests and k = query heads a KV head (their price reads them).
  double m = 0, n = 0, k = 0;
  double batch = 1;       ///< independent products (BMM heads)
  double experts = 0;     ///< MoE: distinct experts whose weights are read
  double flops = 0;       ///< total floating-point operations
  double bytes = 0;       ///< device-memory traffic (weights + activations + KV)
  double comm_bytes = 0;  ///< collectives: payload bytes
  /// Collectives: the ranks taking part (0: the whole tensor-parallel group). DP attention runs
  /// some over one DP rank's attention group (tp / dp ranks).
  int group = 0;
  DType dtype = DType::BF16;  ///< weight dtype for GEMMs, element dtype otherwise
  OpKind kind = OpKind::Elementwise;
  bool replicated = false;  ///< a GEMM every rank runs whole (not sharded)
  /// A layer boundary that a fused all-reduce + residual add + RMSNorm kernel replaces: set on a
  /// decoder layer's two all-reduces and its two add-norms (input and post-attention). With the
  /// fusion on, the all-reduce is priced as the fused kernel and the norm is dropped.
  bool fusable_boundary = false;
  bool combine = false;     ///< AllToAll: the combine (expert outputs back to their tokens), else the dispatch
  bool inter_node = false;  ///< SendRecv: the peer stage's GPU sits on another node (network, not NVLink/PCIe)
  AttentionKernel attention_kernel = AttentionKernel::Roofline;  ///< Attention: what prices it
  /// An op at a fusable boundary: its tokens, capped at 65535 (the fused kernel's variant follows
  /// them, and its hidden size is the all-reduce's elements over them).
  std::uint16_t rows = 0;
  bool is_collective() const {
    return kind == OpKind::AllReduce || kind == OpKind::AllGather || kind == OpKind::AllToAll ||
           kind == OpKind::ReduceScatter;
  }
};
static_assert(sizeof(Op) <= 88, "keep Op packed: the engine walks thousands a cycle");

}  // namespace specsim
