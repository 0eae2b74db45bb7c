#include "plan/cycle_plan.h"

#include <algorithm>
#include <cmath>

#include "plan/forward_builders.h"
#include "plan/pipeline_plan.h"
#include "plan/tree_routing.h"
#include "scenario/pipeline_stages.h"
#include "scenario/sglang_attention.h"
#include "util/error.h"

namespace specsim {

std::string_view op_kind_name(OpKind k) {
  constexpr std::string_view names[] = {"gemm",       "moe_gemm",   "attention",  "norm",           "elementwise",
                                        "all_reduce", "all_gather", "all_to_all", "reduce_scatter", "send_recv"};
  return names[static_cast<int>(k)];
}

double expected_distinct_experts(double tokens, int experts, int k) {
  if (experts <= 0 || k <= 0 || tokens <= 0) return 0;
  const double miss = 1.0 - double(k) / experts;  // a given expert is not among one token's top-k
  return experts * (1.0 - std::pow(miss, tokens));
}

int PhasePlan::kernels() const {
  int n = 0;
  for (const auto& b : blocks) n += b.repeat * static_cast<int>(b.ops.size());
  return n;
}

int PhasePlan::count_of(OpKind k) const {
  int n = 0;
  for (const auto& b : blocks)
    for (const auto& o : b.ops) n += (o.kind == k) ? b.repeat : 0;
  return n;
}

double PhasePlan::comm_bytes_of(OpKind k) const {
  double s = 0;
  for (const auto& b : blocks)
    for (const auto& o : b.ops)
      if (o.kind == k) s += b.repeat * o.comm_bytes;
  return s;
}

double CyclePlan::max_comm_bytes_of(OpKind k) const {
  double most = 0;
  for (const auto& p : phases)
    for (const auto& b : p.blocks)
      for (const auto& op : b.ops)
        if (op.kind == k) most = std::max(most, op.comm_bytes);
  return most;
}

const PhasePlan* CyclePlan::find(PhaseKind k) const {
  for (const auto& p : phases)
    if (p.kind == k) return &p;
  return nullptr;
}

namespace {
// DeepEP's low-latency buffers hold kDeepEPMaxTokensPerRank tokens a rank: a larger forward fails
// in SGLang, so it is refused here with the batch that fits.
void check_deepep_tokens(const CyclePlan& plan, const ParallelLayout& lay) {
  if (lay.a2a != A2aBackend::DeepEP || !lay.low_latency()) return;
  for (const auto& p : plan.phases)
    for (const auto& b : p.blocks)
      for (const auto& o : b.ops)
        if (o.kind == OpKind::AllToAll && !o.combine) {
          const int per_rank = static_cast<int>(
              std::lround(p.tokens / double(plan.batch) * lay.rank_batch(plan.batch) / lay.attn_tp(plan.tp)));
          if (per_rank > kDeepEPMaxTokensPerRank)
            throw InputError("DeepEP low-latency kernels take at most " + std::to_string(kDeepEPMaxTokensPerRank) +
                                 " tokens per rank a forward; " + std::string(phase_name(p.kind)) + " sends " +
                                 std::to_string(per_rank) + ": a smaller batch, or --deepep-mode normal",
                             "--batch-size");
          break;
        }
}
}  // namespace

CyclePlan build_plan(const ModelSpec& target, const ModelSpec* draft, const RunSpec& run) {
  if (target.is_draft())
    throw InputError("--model-path is an EAGLE-3 draft (" + target.architecture + "); give the target model",
                     "--model-path");
  check_tp_split(target, run.tp_size, "target");
  if (run.speculative()) {
    if (!draft) throw InputError("speculation needs a draft model", "--speculative-draft-model-path");
    if (!draft->is_draft())
      throw InputError("the draft must be an EAGLE-3 draft (LlamaForCausalLMEagle3) or a DeepSeek NextN layer, got " +
                           draft->architecture,
                       "--speculative-draft-model-path");
    if (draft->hidden != target.hidden)
      throw InputError("draft hidden_size " + std::to_string(draft->hidden) + " differs from the target's " +
                           std::to_string(target.hidden) + ": this draft belongs to another model",
                       "--speculative-draft-model-path");
    check_tp_split(*draft, run.tp_size, "draft");
  }
  const DType weights = run.dtype.value_or(target.weight_dtype);
  CyclePlan plan;
  plan.tp = run.tp_size;
  plan.batch = run.batch_size;

  // kv_rows: rows that each read a request's whole KV prefix. In a tree draft step SGLang's
  // multi-step draft attention gives every branch (bs x topk rows) its own copy of the prefix.
  // Under DP attention a forward's shape is one DP rank's: its share of the requests.
  const ParallelLayout& lay = run.layout;
  plan.layout = lay;
  // Under pipeline parallelism a forward is one micro-batch's: the requests split over the pp
  // micro-batches SGLang's pipeline loop keeps in flight.
  const double share = double(lay.micro_batch(run.batch_size)) / run.batch_size;
  auto shape = [&](PhaseKind p, double tokens, double kv_rows) {
    ForwardShape f;
    f.tokens = tokens * share, f.batch = kv_rows * share, f.context = double(run.context_len), f.tp = run.tp_size;
    f.phase = p;
    f.kv_bytes = run.kv_cache_bytes;
    f.experts = run.dtype.value_or(target.experts_dtype());
    f.layout = lay;
    return f;
  };
  // An EAGLE-3 draft is a dense model: under DP attention it runs on the rank's own requests in
  // the attention group (tp / dp ranks), an assumption docs/model.md states.
  const bool draft_in_group = lay.dp_attention && draft && !draft->is_nextn();
  auto draft_shape = [&](PhaseKind p, double tokens, double kv_rows) {
    ForwardShape f = shape(p, tokens, kv_rows);
    if (draft_in_group) f.tp = lay.attn_tp(run.tp_size), f.layout = ParallelLayout{};
    return f;
  };
  // ... and its collectives run over that attention group
  auto in_attn_group = [&](std::vector<OpBlock> blocks) {
    if (draft_in_group)
      for (auto& b : blocks)
        for (auto& o : b.ops)
          if (o.is_collective()) o.group = std::max(1, lay.attn_tp(run.tp_size));
    return blocks;
  };
  auto phase = [&](PhaseKind p, int count, double tokens, std::vector<OpBlock> blocks) {
    PhasePlan ph;
    ph.kind = p;
    ph.count = count;
    ph.tokens = static_cast<int>(tokens);
    ph.graph = run.uses_graph(p);
    ph.blocks = std::move(blocks);
    plan.phases.push_back(std::move(ph));
  };

  const double bs = run.batch_size;
  if (run.speculative()) {
    const double t_dec = bs * run.topk;
    // FA3's two-pass tree attention (docs/model.md#tree-attention); decided per plan, as sweeps
    // and tune change topk after the scenario is resolved.
    const bool tree_on_fa3 = run.fa3_tree_attention && run.topk > 1;
    // On SGLang's FlashInfer backend (the verify reads a custom mask) the draft steps run
    // FlashInfer's batch decode, the verify and the draft extend its paged prefill; on its FA3
    // backend every phase runs FA3's paged-KV kernel.
    const bool on_flashinfer = run.verify_custom_mask();
    const AttentionKernel fa3 = run.fa3_attention ? AttentionKernel::Fa3 : AttentionKernel::Roofline;
    if (run.num_steps > 1) {
      ForwardShape dec = draft_shape(PhaseKind::DraftDecode, t_dec, t_dec);
      dec.attention_kernel = on_flashinfer ? AttentionKernel::FlashInferDecode : fa3;
      // A branch's own path so far: about half the draft steps on average over the steps.
      dec.cascade_attention = tree_on_fa3, dec.tree_tokens = run.num_steps / 2.0;
      phase(PhaseKind::DraftDecode, run.num_steps - 1, t_dec,
            in_attn_group(draft_forward(*draft, target.hidden, dec, false, weights)));
    }
    const double t_ver = bs * run.num_draft_tokens;
    ForwardShape ver = shape(PhaseKind::Verify, t_ver, bs);
    ver.cascade_attention = tree_on_fa3, ver.tree_tokens = run.num_draft_tokens;
    ver.attention_kernel = fa3;
    if (on_flashinfer)
      ver.attention_scale = flashinfer_custom_mask_factor(), ver.attention_kernel = AttentionKernel::FlashInferPrefill;
    // A request's tree candidates for one position route partly alike: its verify tokens touch
    // the experts of fewer independent tokens (docs/model.md#moe-tree-routing). Chains keep 1.
    if (target.has_moe)
      ver.routed_share =
          tree_routed_tokens(run.num_draft_tokens, run.num_steps, tree_alternative_overlap()) / run.num_draft_tokens;
    phase(PhaseKind::Verify, 1, t_ver, target_forward(target, weights, ver));
    const double t_ext = bs * (run.num_steps + 1);
    ForwardShape ext = draft_shape(PhaseKind::DraftExtend, t_ext, bs);
    ext.attention_kernel = on_flashinfer ? AttentionKernel::FlashInferPrefill : fa3;
    phase(PhaseKind::DraftExtend, 1, t_ext, in_attn_group(draft_forward(*draft, target.hidden, ext, true, weights)));
  }
  // Plain decode runs FlashInfer's batch decode where SGLang's default backend for a chain is
  // FlashInfer (scenario/sglang_attention.h), FA3's kernel where it is FA3: the backend a server
  // without speculation picks.
  ForwardShape base = shape(PhaseKind::BaselineDecode, bs, bs);
  if (run.custom_mask_chain)
    base.attention_kernel = AttentionKernel::FlashInferDecode;
  else if (run.fa3_attention)
    base.attention_kernel = AttentionKernel::Fa3;
  phase(PhaseKind::BaselineDecode, 1, bs, target_forward(target, weights, base));
  if (lay.pp > 1) {
    // The target's forwards run the stages in sequence with a hand-off between each two; the
    // draft runs whole on the last stage (vLLM's EagleProposer on the last PP rank).
    if (lay.dp_attention)
      throw InputError("not modelled: pipeline parallelism with DP attention; drop --pp-size or --enable-dp-attention",
                       "--pp-size");
    const std::vector<int> stages = pp_stage_layers(target.layers, lay.pp, lay.pp_split);
    for (auto& p : plan.phases) {
      if (p.kind != PhaseKind::Verify && p.kind != PhaseKind::BaselineDecode) continue;
      PpBoundary b;
      b.tokens = p.tokens * share, b.hidden = target.hidden, b.tp = run.tp_size;
      b.num_gpus = std::max(run.num_gpus, run.tp_size * lay.pp), b.nnodes = run.nnodes;
      p.blocks = split_into_stages(p.blocks, stages, b);
    }
  }
  // A group of one rank runs no collective (tp 1, or a DP rank's attention on one GPU).
  for (auto& p : plan.phases)
    for (auto& b : p.blocks)
      std::erase_if(b.ops, [&](const Op& o) { return o.is_collective() && plan.group_of(o) <= 1; });
  check_deepep_tokens(plan, lay);
  return plan;
}

}  // namespace specsim
