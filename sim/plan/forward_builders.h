#pragma once
// Builders of one forward's op blocks per architecture (internal to plan/).
#include <optional>
#include <vector>

#include "plan/cycle_plan.h"

namespace specsim {

/// How many tokens one forward carries and how they sit over requests.
struct ForwardShape {
  double tokens = 1;      ///< tokens in the forward (whole batch)
  double batch = 1;       ///< rows reading a request's KV prefix: requests (x topk in a tree draft step)
  double context = 2048;  ///< KV-cache tokens each request attends to
  int tp = 1;
  PhaseKind phase = PhaseKind::BaselineDecode;
  double kv_bytes = 2.0;         ///< KV-cache bytes per element (--kv-cache-dtype)
  std::optional<DType> experts;  ///< routed experts' weight dtype (none: the layer's)
  /// Expert parallelism and DP attention. Under DP attention `tokens` and `batch` are one DP
  /// rank's, `tp` the whole group's; attention runs tp / dp ways (docs/model.md#parallel-layout).
  ParallelLayout layout;
  /// Independently routed tokens per token of the forward, for the experts its MoE layers read:
  /// below 1 in a verify of draft trees, whose candidates for one position route partly alike
  /// (plan/tree_routing.h); 1 otherwise.
  double routed_share = 1;
  /// Attention in two passes and a merge, as SGLang's FA3 backend runs a draft tree's
  /// (RunSpec::fa3_tree_attention): `tree_tokens` of its own per request beside the prefix.
  bool cascade_attention = false;
  double tree_tokens = 0;
  /// Causal passes the attention pass costs: above 1 where a verify runs SGLang's FlashInfer
  /// backend, whose prefill kernel reads the tree mask as a custom mask
  /// (scenario/sglang_attention.h); the time beyond one pass is an op of its own.
  double attention_scale = 1;
  /// The kernel that prices the attention pass: FlashInfer's where the phase runs SGLang's
  /// FlashInfer backend (set by the cycle plan), else the GPU profile's roofline.
  AttentionKernel attention_kernel = AttentionKernel::Roofline;
};

/// The target model's forward (embedding, layers, lm_head + all-gather, sampling tail).
std::vector<OpBlock> target_forward(const ModelSpec& m, DType weights, const ForwardShape& f);

/// The draft's forward. EAGLE-3: `with_fc` on the extend forward (input: 3 target hidden
/// states). NextN: enorm/hnorm, the replicated eh_proj, one MLA + MoE layer at the target's
/// weight dtype `target_weights`, the shared vocab-parallel LM head.
std::vector<OpBlock> draft_forward(const ModelSpec& d, int target_hidden, const ForwardShape& f, bool with_fc,
                                   DType target_weights = DType::BF16);

/// Throws InputError naming --tp-size when the model cannot be split `tp` ways.
void check_tp_split(const ModelSpec& m, int tp, const char* which);

/// Local KV heads per rank: kv/tp, or 1 (replicated) when tp exceeds the KV heads.
int local_kv_heads(const ModelSpec& m, int tp);

}  // namespace specsim
