#pragma once
// The serving settings of one scenario, in SGLang's terms.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "scenario/dtype.h"
#include "scenario/parallel_layout.h"

namespace specsim {

/// NextN is SGLang's name for EAGLE with DeepSeek's MTP layer as the draft (same worker).
enum class SpecAlgo { None, Eagle, Eagle3, NextN };

/// The forwards of one cycle, plus the plain decode step it is compared with.
enum class PhaseKind { DraftDecode = 0, Verify = 1, DraftExtend = 2, BaselineDecode = 3 };
constexpr int kNumPhaseKinds = 4;
std::string_view phase_name(PhaseKind p);
PhaseKind parse_phase(std::string_view s, const std::string& where);

/// One all-reduce backend to evaluate: NCCL, our custom kernel, a fixed latency, or a backend
/// registered by name (cost/allreduce_model.h costs each).
struct AllReduceChoice {
  enum class Kind { Nccl, Custom, Fixed, Registered } kind = Kind::Nccl;
  double fixed_us = 0;           ///< Fixed: latency of every all-reduce
  std::string variant = "auto";  ///< Custom: auto or a name from car_policy::variant_names()
  std::string name;              ///< Registered: the backend's name
  std::string arg;               ///< Registered: what follows `NAME:`, if anything
  /// Custom: `custom:fused`, the all-reduce fused with the residual add and RMSNorm at every layer
  /// boundary (kernels/car_fused_norm.cu); the all-reduces it cannot fuse run `auto`.
  bool fused_norm = false;
  /// `BACKEND@PHASES`: the phases it replaces NCCL in (none given: every phase).
  std::array<bool, kNumPhaseKinds> phases{true, true, true, true};
  bool scoped = false;  ///< phases were given
  bool applies_to(PhaseKind p) const { return phases[static_cast<int>(p)]; }
  std::string label() const;      ///< "nccl", "custom", "fixed:40", "fixed:40@verify"
  std::string kind_name() const;  ///< "nccl", "custom", "fixed" (the JSON contract's value)
};
/// Parses nccl | custom[:VARIANT] | custom:fused | fixed:US | NAME[:ARG] (a registered backend; an unknown
/// NAME is refused when the backend is looked up, cost/allreduce_model.h), each optionally
/// followed by @PHASE[,PHASE...]: the backend in those phases, NCCL in the others.
AllReduceChoice parse_allreduce(std::string_view s, const std::string& where = "--allreduce");

/// NCCL environment the model honours (NCCL_P2P_LEVEL, NCCL_ALGO, NCCL_PROTO).
struct NcclSettings {
  std::string p2p_level = "PXB";                        ///< NCCL's default: P2P up to PCIe switches
  std::array<bool, 2> algo_enabled{true, true};         ///< [tree, ring]
  std::array<bool, 3> proto_enabled{true, true, true};  ///< [LL, LL128, Simple]
};

struct RunSpec {
  /// Where accept_len / accept_rate came from when not their flags ("scenario file F"); empty: the flag.
  std::string accept_source;
  int tp_size = 8;
  int num_gpus = 0;  ///< 0: the tp size
  int nnodes = 1;    ///< --nnodes: nodes the GPUs are spread over
  SpecAlgo algo = SpecAlgo::Eagle3;
  int num_steps = 3;
  int topk = 1;
  int num_draft_tokens = 4;
  int batch_size = 1;
  long long context_len = 2048;
  int cuda_graph_max_bs = 160;
  /// vLLM's capture sizes count a forward's tokens (a verify's batch x draft tokens), SGLang's its
  /// requests: cuda_graph_max_bs is read as tokens when set.
  bool graph_limit_in_tokens = false;
  bool disable_cuda_graph = false;
  /// SGLang's --disable-overlap-schedule: plain decode without the overlap scheduler, so its host
  /// work adds to the GPU step (the speculative cycle runs without it anyway: runtime profile).
  bool disable_overlap_schedule = false;
  std::array<bool, kNumPhaseKinds> force_eager{};  ///< phases run eagerly whatever the graph settings
  std::optional<DType> dtype;                      ///< overrides the target's weight dtype
  std::string kv_cache_dtype = "auto";             ///< --kv-cache-dtype as given (auto: 16-bit)
  std::string quantization;                        ///< --quantization as given ("": none; its format is in dtype)
  double kv_cache_bytes = 2.0;                     ///< the KV cache's bytes per element
  std::optional<double> accept_len;                ///< mean accepted draft tokens per verify + 1
  std::optional<double> accept_rate;               ///< per-token acceptance (chain formula)
  /// The draft's per-depth decay of its acceptance (a_d = rate x decay^(d-1)): its zoo profile's
  /// (scenario/draft_acceptance.h), 1 (constant with depth) when it has none.
  double accept_decay = 1.0;
  /// The (steps, topk, draft tokens) accept_len was measured at, where known apart from the run's
  /// own (a scenario file's accept len under flags that change the draft shape).
  std::optional<std::array<int, 3>> accept_len_shape;
  std::optional<double> mem_fraction_static;  ///< SGLang's --mem-fraction-static (default: SGLang's)
  /// A pasted launch command's limits, kept with a saved scenario: running requests
  /// (--max-running-requests, --max-num-seqs), tokens a request (--context-length,
  /// --max-model-len), and SGLang's KV pool (--max-total-tokens, batch x context).
  std::optional<int> max_running_requests;
  std::optional<long long> max_context_len, max_total_tokens;
  std::optional<double> measured_baseline_tok_s;
  std::optional<double> measured_allreduce_us;
  std::optional<double> measured_spec_tok_s;
  std::vector<AllReduceChoice> allreduce;  ///< backends side by side
  NcclSettings nccl;
  /// SGLang's --enable-flashinfer-allreduce-fusion: every layer boundary runs FlashInfer's fused
  /// all-reduce + add + RMSNorm, whatever the --allreduce backend (cost/allreduce_fusion.h).
  bool flashinfer_fusion = false;
  /// The fusion is on by SGLang's default for the release, model and GPU, not by a flag.
  bool flashinfer_fusion_by_default = false;
  /// --enforce-disable-flashinfer-allreduce-fusion: off although SGLang's default would turn it on.
  bool flashinfer_fusion_enforced_off = false;
  /// The SGLang release whose defaults the run took ("" for v0.5.2, the pinned one).
  std::string sglang_release;
  /// A draft tree's (topk > 1) attention runs on SGLang's FlashAttention-3 backend, in two passes
  /// (the shared prefix and the tree's own tokens) and a merge (flashattention_backend.py,
  /// use_cascade_attn), in the verify and in each draft step. True where the command names
  /// --attention-backend fa3, or SGLang picks it for this model's trees: MLA models and gpt-oss on
  /// Hopper; other models' trees run FlashInfer by default (model_runner.py), one pass.
  bool fa3_tree_attention = false;
  /// The verify's attention runs SGLang's FlashInfer backend for MHA models, whose paged prefill
  /// reads the verify's mask as a custom mask (flashinfer_backend.py), for a chain (topk 1) and for
  /// a tree apart: SGLang's default rule picks FlashInfer for a tree of any MHA model, and for a
  /// chain off Hopper or of an architecture outside its FA3 list; or --attention-backend flashinfer.
  bool custom_mask_chain = false, custom_mask_tree = false;
  /// SGLang runs this model's attention on FA3 (flashattention_backend.py) on Hopper: named
  /// --attention-backend fa3, or its default for an MHA architecture on the FA3 list and for every
  /// MLA model. The phases that do not read a custom mask then run FA3's paged-KV kernel, an MLA
  /// target's its absorbed MLA call (docs/model.md#fa3-kernel).
  bool fa3_attention = false;
  /// Whether this plan's verify (by its topk) reads a custom mask.
  bool verify_custom_mask() const { return topk > 1 ? custom_mask_tree : custom_mask_chain; }
  /// SGLang's --attention-backend as the command gave it (fa3, flashinfer); none: its default.
  std::optional<std::string> attention_backend;
  /// Expert parallelism and DP attention (scenario/parallel_layout.h); default: one TP group.
  ParallelLayout layout;

  bool speculative() const { return algo != SpecAlgo::None; }
  /// Whether a phase runs from a CUDA graph (graph when bs <= cuda-graph-max-bs and graphs on).
  bool uses_graph(PhaseKind p) const {
    return !disable_cuda_graph && !force_eager[static_cast<int>(p)] && graph_rows(p) <= cuda_graph_max_bs;
  }
  /// What a phase's graph is captured by: its requests, or (graph_limit_in_tokens) its tokens.
  long long graph_rows(PhaseKind p) const {
    if (!graph_limit_in_tokens) return batch_size;
    const long long per_request = p == PhaseKind::Verify || p == PhaseKind::DraftExtend ? num_draft_tokens
                                  : p == PhaseKind::DraftDecode                         ? topk
                                                                                        : 1;
    return static_cast<long long>(batch_size) * per_request;
  }
};

std::string_view algo_name(SpecAlgo a);

/// Applies the draft-shape settings given (the others keep `r`'s). With topk 1 the draft is a
/// chain: a given steps sets draft tokens = steps + 1, a given draft-token count sets the steps, and
/// a topk of 1 given alone keeps the steps (draft tokens = steps + 1).
void apply_draft_shape(RunSpec& r, std::optional<int> topk, std::optional<int> steps, std::optional<int> draft_tokens);

/// Checks numbers and combinations SGLang rejects; InputError naming the flag.
void validate_run(const RunSpec& r);

}  // namespace specsim
