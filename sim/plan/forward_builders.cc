// The target model's forward per rank, as SGLang lays it out under pure tensor parallelism:
// vocab-parallel embedding + all-reduce; per layer attention -> o_proj all-reduce -> MLP/MoE ->
// all-reduce; final norm, vocab-parallel lm_head, logits all-gather (docs/sources.md#S-sglang-collectives).
#include "plan/forward_builders.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "plan/expert_parallel.h"
#include "plan/op_builders.h"
#include "scenario/sglang_attention.h"
#include "util/error.h"

namespace specsim {
using namespace ops;

void check_tp_split(const ModelSpec& m, int tp, const char* which) {
  auto need = [&](int dim, const char* what) {
    if (dim % tp != 0)
      throw InputError(std::string(which) + " " + what + " (" + std::to_string(dim) + ") is not divisible by tp " +
                           std::to_string(tp) + ": pick a tp size that divides it",
                       "--tp-size");
  };
  if (m.heads % tp != 0 && m.is_draft() && !m.is_nextn())
    // SGLang v0.5.2's LlamaAttention (the EAGLE-3 draft's layer): `assert self.total_num_heads %
    // tp_size == 0` over the whole TP group, DP attention or not: the server does not start.
    throw InputError(std::string(which) + " num_attention_heads (" + std::to_string(m.heads) +
                         ") is not divisible by tp " + std::to_string(tp) +
                         ": SGLang shards the EAGLE-3 draft's attention over every TP rank and asserts it divides "
                         "(LlamaAttention), so it does not load at this tp: pick a tp size that divides it, or a "
                         "draft with such a head count",
                     "--tp-size");
  need(m.heads, "num_attention_heads");
  // vocabularies are padded (padded_vocab), so any vocab size splits
  if (!m.has_moe || m.moe.first_dense_layers > 0) need(m.intermediate, "intermediate_size");
  if (m.has_moe) need(m.moe.intermediate, "moe_intermediate_size");
  if (!m.has_mla && m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
    throw InputError(std::string(which) + " num_key_value_heads (" + std::to_string(m.kv_heads) + ") and tp " +
                         std::to_string(tp) + " neither divide the other",
                     "--tp-size");
}

namespace {

// SGLang pads vocab-parallel embeddings and lm_heads to a multiple of 64 rows
// (DEFAULT_VOCAB_PADDING_SIZE in sglang/srt/layers/vocab_parallel_embedding.py), then splits them
// across the tp ranks: a vocab of 128257 runs at tp 8 as 128320 rows.
double padded_vocab(int vocab) { return double((vocab + 63) / 64 * 64); }
constexpr double kB = kActBytes;

// A fused residual-add + RMSNorm over [t, h]: reads x and residual, writes both.
Op add_norm(const char* name, double t, double h) { return small(name, OpKind::Norm, 4.0 * t * h * kB, 5.0 * t * h); }

// Per-token-group fp8 activation quantization before an fp8 GEMM (DeepSeek's block-fp8 path), or
// the fp4 one before an NVFP4 GEMM (W4A4); W4A16 formats take bf16 activations.
void maybe_quant(std::vector<Op>& ops, DType w, const char* name, double t, double k) {
  if (w == DType::FP8) ops.push_back(small(name, OpKind::Elementwise, t * k * (kB + 1.0)));
  if (w == DType::NVFP4) ops.push_back(small(name, OpKind::Elementwise, t * k * (kB + dtype_bytes(w))));
}

// A draft tree's attention as SGLang's FA3 backend runs it (flashattention_backend.py,
// use_cascade_attn): the pass over the prefix (the `attention` op) returns its softmax LSE, a
// second pass covers the tree's own tokens, both LSEs are transposed to contiguous copies, and
// merge_state_v2 joins the two outputs. Four kernels a layer beside a chain's one.
void tree_cascade(std::vector<Op>& ops, const ForwardShape& f, double heads, double tree_kv_bytes, double qk_dim,
                  double v_dim) {
  const double t = f.tokens;
  ops.push_back(attention("tree_attention", t, heads, tree_kv_bytes + t * heads * (qk_dim + v_dim) * kB,
                          2.0 * t * heads * f.tree_tokens * (qk_dim + v_dim)));
  for (const char* lse : {"lse_copy_prefix", "lse_copy_tree"})
    ops.push_back(small(lse, OpKind::Elementwise, 2.0 * t * heads * 4.0));
  ops.push_back(small("merge_state", OpKind::Elementwise, 3.0 * t * heads * v_dim * kB + 2.0 * t * heads * 4.0));
}

// GQA attention block of Llama/Qwen (and the EAGLE-3 draft layer, whose qkv input is 2H wide).
void gqa_attention(std::vector<Op>& ops, const ModelSpec& m, DType w, const ForwardShape& f, double qkv_in,
                   bool qk_norm) {
  const double t = f.tokens, hd = m.head_dim;
  const double ql = m.heads / f.tp, kvl = local_kv_heads(m, f.tp);
  ops.push_back(gemm("qkv_proj", t, (ql + 2 * kvl) * hd, qkv_in, w));
  if (qk_norm) ops.push_back(small("qk_norm", OpKind::Norm, 2.0 * t * (ql + kvl) * hd * kB));
  ops.push_back(small("rotary_emb", OpKind::Elementwise, 2.0 * t * (ql + kvl) * hd * kB));
  ops.push_back(small("kv_cache_store", OpKind::Elementwise, t * 2 * kvl * hd * (kB + f.kv_bytes)));
  // K and V of every request's context are read once for all of its query tokens.
  const double kv_read = f.batch * f.context * kv_bytes_per_token_layer(m, f.tp, f.kv_bytes);
  const double flops = 2.0 * t * ql * f.context * (hd + hd);
  ops.push_back(attention("attention", t, ql, kv_read + 2.0 * t * ql * hd * kB, flops));
  // FA3's price covers the shape it was measured at: other shapes keep the profile's terms.
  const bool fa3_measured = f.attention_kernel != AttentionKernel::Fa3 || fa3_price_covers(hd, f.kv_bytes);
  if (f.attention_kernel != AttentionKernel::Roofline && fa3_measured) {
    // the measured kernels' prices read the requests (n) and the query heads a KV head (k)
    Op& a = ops.back();
    a.attention_kernel = f.attention_kernel, a.n = f.batch, a.k = ql / kvl;
    // SGLang's FlashInfer backend decodes on tensor cores past 4 query heads a KV head, and for
    // an fp8 KV cache (should_use_tensor_core)
    if (f.attention_kernel == AttentionKernel::FlashInferDecode && (ql > 4 * kvl || f.kv_bytes < 2))
      a.attention_kernel = AttentionKernel::FlashInferDecodeTc;
  }
  // FlashInfer's verify reads its mask as a custom mask, a kernel measured at attention_scale
  // times the causal one: the extra shown as an op of its own, one more attention kernel over
  // (attention_scale - 1) x the pass's bytes and FLOPs (its fixed cost included). Priced by
  // FlashInfer's measured kernels, it is the custom-mask kernel's time beyond the causal one's.
  if (f.attention_scale > 1) {
    Op mask = ops.back();
    mask.name = "attention_custom_mask";
    mask.bytes *= f.attention_scale - 1, mask.flops *= f.attention_scale - 1;
    if (f.attention_kernel == AttentionKernel::FlashInferPrefill)
      mask.attention_kernel = AttentionKernel::FlashInferMask;
    ops.push_back(mask);
  }
  if (f.cascade_attention) tree_cascade(ops, f, ql, f.batch * f.tree_tokens * 2 * kvl * hd * f.kv_bytes, hd, hd);
  ops.push_back(gemm("o_proj", t, m.hidden, ql * hd, w));
}

// MLA (DeepSeek-V3) with the absorbed path SGLang uses for decode and target verify.
void mla_attention(std::vector<Op>& ops, const ModelSpec& m, DType w, const ForwardShape& f) {
  const double t = f.tokens, h = m.hidden, hl = m.heads / f.tp;
  const auto& a = m.mla;
  const double latent = a.kv_lora_rank + a.qk_rope_dim;  // 576: cached per token per layer, on every rank
  maybe_quant(ops, w, "act_quant", t, h);
  ops.push_back(gemm("fused_qkv_a_proj", t, a.q_lora_rank + a.kv_lora_rank + a.qk_rope_dim, h, w, /*replicated=*/true));
  ops.push_back(small("q_a_layernorm", OpKind::Norm, 2.0 * t * a.q_lora_rank * kB));
  ops.push_back(small("kv_a_layernorm", OpKind::Norm, 2.0 * t * a.kv_lora_rank * kB));
  maybe_quant(ops, w, "act_quant", t, a.q_lora_rank);
  ops.push_back(gemm("q_b_proj", t, hl * (a.qk_nope_dim + a.qk_rope_dim), a.q_lora_rank, w));
  // fp8 checkpoints run the absorbed bmm's as per-tensor fp8 (per_tensor_quant_mla_fp8, then
  // bmm_fp8), one quantization kernel each; the bmm's keep the bf16 GEMM's fixed cost (cuBLAS,
  // not the block-scaled kernel) and their bf16 weight bytes (1 MB a layer over, ~0.2 us).
  maybe_quant(ops, w, "bmm_quant", t, hl * a.qk_nope_dim);
  ops.push_back(bmm("w_kc", t, a.kv_lora_rank, a.qk_nope_dim, hl, DType::BF16));
  ops.push_back(small("rotary_emb", OpKind::Elementwise, 2.0 * t * (hl + 1) * a.qk_rope_dim * kB));
  ops.push_back(small("kv_cache_store", OpKind::Elementwise, t * latent * (kB + f.kv_bytes)));
  const double kv_read = f.batch * f.context * kv_bytes_per_token_layer(m, f.tp, f.kv_bytes);
  const double flops = 2.0 * t * hl * f.context * (latent + a.kv_lora_rank);
  ops.push_back(attention("mla_attention", t, hl, kv_read + t * hl * (latent + a.kv_lora_rank) * kB, flops));
  // SGLang's FA3 backend: FA3's absorbed MLA call where its measured price covers the shape (the
  // requests in n, the query heads of the one latent KV head in k)
  const bool fa3_mla =
      f.attention_kernel == AttentionKernel::Fa3 && fa3_mla_price_covers(a.qk_rope_dim, a.kv_lora_rank, f.kv_bytes);
  if (fa3_mla) {
    Op& op = ops.back();
    op.attention_kernel = AttentionKernel::Fa3Mla, op.n = f.batch, op.k = hl;
  }
  if (f.cascade_attention)
    tree_cascade(ops, f, hl, f.batch * f.tree_tokens * latent * f.kv_bytes, latent, a.kv_lora_rank);
  // At decode sizes the MLA kernels split the KV sequence across CTAs and merge the partial
  // outputs in a second kernel (Triton stage 2, FA3's split combine: inside FA3's measured call,
  // so not launched apart where that prices the attention).
  ops.push_back(small("mla_split_merge", OpKind::Elementwise, 2.0 * t * hl * a.kv_lora_rank * 4.0));
  if (fa3_mla) ops.back().attention_kernel = AttentionKernel::Fa3Mla;
  maybe_quant(ops, w, "bmm_quant", t, hl * a.kv_lora_rank);
  ops.push_back(bmm("w_vc", t, a.v_head_dim, a.kv_lora_rank, hl, DType::BF16));
  // [heads, t, v] -> [t, heads * v]: transpose(0, 1).flatten(1, 2) copies
  ops.push_back(small("attn_out_copy", OpKind::Elementwise, 2.0 * t * hl * a.v_head_dim * kB));
  maybe_quant(ops, w, "act_quant", t, hl * a.v_head_dim);
  ops.push_back(gemm("o_proj", t, h, hl * a.v_head_dim, w));
}

void dense_mlp(std::vector<Op>& ops, double t, double h, double inter_local, DType w) {
  maybe_quant(ops, w, "act_quant", t, h);
  ops.push_back(gemm("gate_up_proj", t, 2 * inter_local, h, w));
  ops.push_back(small("silu_and_mul", OpKind::Elementwise, 3.0 * t * inter_local * kB));
  maybe_quant(ops, w, "act_quant", t, inter_local);
  ops.push_back(gemm("down_proj", t, h, inter_local, w));
}

void moe_mlp(std::vector<Op>& ops, const ModelSpec& m, DType w, const ForwardShape& f) {
  const double t = f.tokens, h = m.hidden;
  const auto& e = m.moe;
  const double il = double(e.intermediate) / f.tp;  // every rank holds every expert, sharded inside
  ops.push_back(gemm("router_gate", t, e.routed_experts, h, DType::BF16, /*replicated=*/true));
  ops.push_back(small("topk_select", OpKind::Elementwise, t * e.routed_experts * 4.0));
  ops.push_back(small("moe_align", OpKind::Elementwise, t * e.experts_per_token * 8.0));
  const int fused = e.fuse_shared ? e.shared_experts : 0;
  const double pairs = t * (e.experts_per_token + fused);
  const double distinct = expected_distinct_experts(t * f.routed_share, e.routed_experts, e.experts_per_token) + fused;
  const DType ew = f.experts.value_or(w);  // an experts-only format (int4, mxfp4) applies here
  maybe_quant(ops, ew, "act_quant", t, h);
  ops.push_back(moe_gemm("moe_w13", pairs, distinct, 2 * il, h, ew));
  ops.push_back(small("silu_and_mul", OpKind::Elementwise, 3.0 * pairs * il * kB));
  maybe_quant(ops, ew, "act_quant", pairs, il);
  ops.push_back(moe_gemm("moe_w2", pairs, distinct, h, il, ew));
  ops.push_back(small("moe_sum", OpKind::Elementwise, pairs * h * kB + t * h * kB));
  if (!e.fuse_shared && e.shared_experts > 0) {
    // Kimi-K2: the shared expert is a TP-sharded MLP whose output joins the routed sum before the AR.
    dense_mlp(ops, t, h, double(e.intermediate) * e.shared_experts / f.tp, w);
  }
}

const char* tail_name(PhaseKind p) {
  switch (p) {
    case PhaseKind::Verify: return "verify_tree_sample";
    case PhaseKind::BaselineDecode: return "sample";
    default: return "draft_topk";
  }
}

// A decoder layer under expert parallelism or DP attention (SGLang's LayerCommunicator, v0.5.2):
// attention on the DP rank's own tokens, tp / dp ways; then either (a2a backend) each rank's
// share of them through dispatch -> its experts -> combine, or every token of the group gathered
// (DP attention), through the experts split ep ways, and reduce-scattered back.
OpBlock parallel_decoder_layer(const char* name, int repeat, bool moe, const ModelSpec& m, DType w,
                               const ForwardShape& f) {
  const ParallelLayout& l = f.layout;
  const int atp = l.attn_tp(f.tp);
  const double t = f.tokens, h = m.hidden;
  ForwardShape fa = f;
  fa.tp = atp;
  OpBlock b{name, repeat, {}};
  b.ops.push_back(add_norm("input_layernorm", t, h));
  if (m.has_mla)
    mla_attention(b.ops, m, w, fa);
  else
    gqa_attention(b.ops, m, w, fa, h, m.qk_norm);
  const DType ew = f.experts.value_or(w);
  if (moe && l.a2a != A2aBackend::None) {  // ScatterMode.SCATTERED: each rank its share of the tokens
    const double own = std::ceil(t / atp);
    b.ops.push_back(reduce_scatter("attn_reduce_scatter", t * h * kB, atp));
    b.ops.push_back(add_norm("post_attention_layernorm", own, h));
    ep_moe_ops(b.ops, m, w, ew, EpMoeShape{own, own * f.tp, f.tp, l, f.routed_share});
    b.ops.push_back(all_gather("attn_all_gather", t * h * kB, atp));
    return b;
  }
  if (!l.dp_attention) {  // experts split ep ways, every rank every token, summed by the all-reduce
    b.ops.push_back(all_reduce("attn_allreduce", t * h * kB));
    b.ops.push_back(add_norm("post_attention_layernorm", t, h));
    if (moe)
      ep_moe_ops(b.ops, m, w, ew, EpMoeShape{t, t, f.tp, l, f.routed_share});
    else
      dense_mlp(b.ops, t, h, double(m.intermediate) / f.tp, w);
    b.ops.push_back(all_reduce("mlp_allreduce", t * h * kB));
    return b;
  }
  // ScatterMode.FULL: the DP ranks' tokens, padded to the largest (SGLang's max-len padding under
  // CUDA graphs), gathered over the whole group and reduce-scattered back after the MLP.
  const double all = t * l.dp;
  b.ops.push_back(all_reduce("attn_allreduce", t * h * kB, atp));
  b.ops.push_back(add_norm("post_attention_layernorm", t, h));
  b.ops.push_back(all_gather("dp_gather", all * h * kB));
  if (moe)
    ep_moe_ops(b.ops, m, w, ew, EpMoeShape{all, all, f.tp, l, f.routed_share});
  else
    dense_mlp(b.ops, all, h, double(m.intermediate) / f.tp, w);
  b.ops.push_back(reduce_scatter("dp_reduce_scatter", all * h * kB));
  return b;
}

// One decoder layer of a target (or of the NextN draft), `repeat` times.
OpBlock decoder_layer(const char* name, int repeat, bool moe, const ModelSpec& m, DType w, const ForwardShape& f) {
  if (f.layout.reshapes_layers()) return parallel_decoder_layer(name, repeat, moe, m, w, f);
  const double t = f.tokens, h = m.hidden, ar = t * h * kB;
  OpBlock b{name, repeat, {}};
  // the four ops of the two fused boundaries (op.h: fusable_boundary): the mlp all-reduce and the
  // next layer's input norm, the attention all-reduce and the post-attention norm; 2 per layer
  auto boundary = [t](Op op) {
    op.fusable_boundary = true;
    op.rows = static_cast<std::uint16_t>(std::min(t, 65535.0));
    return op;
  };
  b.ops.push_back(boundary(add_norm("input_layernorm", t, h)));
  if (m.has_mla)
    mla_attention(b.ops, m, w, f);
  else
    gqa_attention(b.ops, m, w, f, h, m.qk_norm);
  b.ops.push_back(boundary(all_reduce("attn_allreduce", ar)));
  b.ops.push_back(boundary(add_norm("post_attention_layernorm", t, h)));
  if (moe)
    moe_mlp(b.ops, m, w, f);
  else
    dense_mlp(b.ops, t, h, double(m.intermediate) / f.tp, w);
  b.ops.push_back(boundary(all_reduce("mlp_allreduce", ar)));
  return b;
}

// Tokens the vocab-parallel LM head runs on: under DP attention (without --enable-dp-lm-head)
// SGLang's LogitsProcessor gathers every DP rank's hidden states first (dp_gather_replicate).
double lm_head_tokens(std::vector<Op>& ops, double t, double h, const ForwardShape& f) {
  if (!f.layout.dp_attention) return t;
  const double all = t * f.layout.dp;
  ops.push_back(all_gather("lm_head_dp_gather", all * h * kB));
  return all;
}

// DeepSeek's NextN layer as SGLang's DeepseekModelNextN runs it (docs/sources-runtime.md#sglang-deepseek-nextn):
// the vocab-parallel embedding (its all-reduce), enorm(embed) and hnorm(target hidden)
// concatenated through the replicated eh_proj (plain nn.Linear, bf16, no collective), one MoE
// decoder layer, shared_head.norm and the target's vocab-parallel LM head with its all-gather.
std::vector<OpBlock> nextn_forward(const ModelSpec& d, DType w, const ForwardShape& f) {
  const double t = f.tokens, h = d.hidden, ar = t * h * kB;
  std::vector<OpBlock> blocks;
  OpBlock embed{"nextn_embed", 1, {}};
  embed.ops.push_back(small("vocab_embedding", OpKind::Elementwise, 2.0 * t * h * kB));
  if (!f.layout.dp_attention) embed.ops.push_back(all_reduce("embed_allreduce", ar));
  embed.ops.push_back(small("enorm", OpKind::Norm, 2.0 * t * h * kB));
  embed.ops.push_back(small("hnorm", OpKind::Norm, 2.0 * t * h * kB));
  embed.ops.push_back(gemm("eh_proj", t, h, 2.0 * h, DType::BF16, /*replicated=*/true));
  blocks.push_back(std::move(embed));
  blocks.push_back(decoder_layer("nextn_layer", 1, true, d, w, f));
  OpBlock head{"nextn_lm_head", 1, {}};
  head.ops.push_back(add_norm("shared_head_norm", t, h));
  const double tl = lm_head_tokens(head.ops, t, h, f);
  head.ops.push_back(gemm("lm_head", tl, double(d.vocab) / f.tp, h, DType::BF16));
  head.ops.push_back(all_gather("logits_allgather", tl * d.vocab * kB));
  head.ops.push_back(small("draft_topk", OpKind::Elementwise, t * d.vocab * 4.0));
  blocks.push_back(std::move(head));
  return blocks;
}

}  // namespace

std::vector<OpBlock> target_forward(const ModelSpec& m, DType w, const ForwardShape& f) {
  const double t = f.tokens, h = m.hidden, ar = t * h * kB;
  std::vector<OpBlock> blocks;

  OpBlock embed{"embed", 1, {}};
  embed.ops.push_back(small("vocab_embedding", OpKind::Elementwise, 2.0 * t * h * kB));
  // under DP attention the embedding is replicated (enable_tp=False in SGLang's MoE models)
  if (!f.layout.dp_attention) embed.ops.push_back(all_reduce("embed_allreduce", ar));
  blocks.push_back(std::move(embed));

  auto layer = [&](const char* name, int repeat, bool moe) {
    blocks.push_back(decoder_layer(name, repeat, moe, m, w, f));
  };
  const int dense_layers = m.has_moe ? m.moe.first_dense_layers : m.layers;
  if (dense_layers > 0) layer("dense_layer", dense_layers, false);
  // gpt-oss: the sliding-window layers (all MoE) read at most the window's KV tokens per request.
  const int swa_layers = std::min(m.sliding_layers, m.layers - dense_layers);
  if (swa_layers > 0) {
    ForwardShape fw = f;
    fw.context = m.window_context(f.context);
    blocks.push_back(decoder_layer("moe_layer_sliding", swa_layers, m.has_moe, m, w, fw));
  }
  if (m.layers - dense_layers - swa_layers > 0) layer("moe_layer", m.layers - dense_layers - swa_layers, m.has_moe);

  OpBlock head{"lm_head", 1, {}};
  const double vl = padded_vocab(m.vocab) / f.tp;
  head.ops.push_back(add_norm("final_norm", t, h));
  const double tl = lm_head_tokens(head.ops, t, h, f);
  head.ops.push_back(gemm("lm_head", tl, vl, h, DType::BF16));
  head.ops.push_back(all_gather("logits_allgather", tl * padded_vocab(m.vocab) * kB));
  head.ops.push_back(small(tail_name(f.phase), OpKind::Elementwise, t * m.vocab * 4.0));
  blocks.push_back(std::move(head));
  return blocks;
}

std::vector<OpBlock> draft_forward(const ModelSpec& d, int target_hidden, const ForwardShape& f, bool with_fc,
                                   DType target_weights) {
  if (d.is_nextn()) return nextn_forward(d, target_weights, f);
  const double t = f.tokens, h = d.hidden, ar = t * h * kB;
  const DType w = d.weight_dtype;
  std::vector<OpBlock> blocks;

  OpBlock embed{"draft_embed", 1, {}};
  embed.ops.push_back(small("vocab_embedding", OpKind::Elementwise, 2.0 * t * h * kB));
  embed.ops.push_back(all_reduce("embed_allreduce", ar));
  // EAGLE-3's fc folds three target hidden states into one; it is replicated, not sharded.
  if (with_fc) embed.ops.push_back(gemm("fc", t, h, 3.0 * target_hidden, w, /*replicated=*/true));
  blocks.push_back(std::move(embed));

  OpBlock layer{"draft_layer", 1, {}};
  layer.ops.push_back(small("hidden_norm", OpKind::Norm, 2.0 * t * h * kB));
  layer.ops.push_back(add_norm("input_layernorm", t, h));
  gqa_attention(layer.ops, d, w, f, 2.0 * h, false);  // qkv reads concat[norm(embed), norm(hidden)]
  layer.ops.push_back(all_reduce("attn_allreduce", ar));
  layer.ops.push_back(add_norm("post_attention_layernorm", t, h));
  dense_mlp(layer.ops, t, h, double(d.intermediate) / f.tp, w);
  layer.ops.push_back(all_reduce("mlp_allreduce", ar));
  blocks.push_back(std::move(layer));

  OpBlock head{"draft_lm_head", 1, {}};
  head.ops.push_back(add_norm("final_norm", t, h));
  head.ops.push_back(gemm("lm_head", t, padded_vocab(d.draft_vocab) / f.tp, h, w));
  head.ops.push_back(all_gather("logits_allgather", t * d.draft_vocab * kB));
  head.ops.push_back(small("draft_topk", OpKind::Elementwise, t * d.draft_vocab * 4.0));
  blocks.push_back(std::move(head));
  return blocks;
}

}  // namespace specsim
