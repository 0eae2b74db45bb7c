#include "scenario/memory_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "scenario/pipeline_stages.h"
#include "util/error.h"

namespace specsim {

namespace {

constexpr double kMiBPerGiB = 1024.0;
// Weight bytes of one copy: embeddings and lm_head in bf16, the routed experts in their format,
// the rest in the weight dtype; --dtype / --quantization (`dtype`) sets both.
double weight_bytes(const ModelSpec& m, std::optional<DType> dtype) {
  const double emb = 2.0 * double(m.hidden) * (m.is_draft() ? m.draft_vocab : m.vocab);
  const double experts = m.routed_expert_params();
  return (m.param_count() - emb - experts) * dtype_bytes(dtype.value_or(m.weight_dtype)) +
         experts * dtype_bytes(dtype.value_or(m.experts_dtype())) + emb * 2.0;
}

// The routed experts' weight bytes of one copy.
double routed_expert_bytes(const ModelSpec& m, std::optional<DType> dtype) {
  return m.routed_expert_params() * dtype_bytes(dtype.value_or(m.experts_dtype()));
}

// KV bytes one request of `context` tokens holds on one rank, every layer, at the run's KV-cache
// dtype. Sliding-window layers (gpt-oss) keep only the window's tokens: SGLang's hybrid SWA pool
// frees the ones that leave it.
double kv_bytes_per_request(const ModelSpec& m, int tp, double elem_bytes, double context) {
  const double layer = kv_bytes_per_token_layer(m, tp, elem_bytes);
  return (double(m.layers - m.sliding_layers) * context + double(m.sliding_layers) * m.window_context(context)) * layer;
}

// One pipeline stage's share of the target: its layers' share of the attention and dense weights
// (spread evenly over the layers), its MoE layers' share of the routed experts, the embedding on
// the first stage and the LM head on the last; the KV cache of its layers.
struct PpStageMemory {
  int stage = 0;
  double weight_bytes = 0, kv_bytes_per_token = 0;
};

PpStageMemory pp_stage_memory(const ModelSpec& m, const RunSpec& run, int attn_tp, int stage,
                              const std::vector<int>& layers) {
  const double emb_one = 2.0 * double(m.hidden) * m.vocab;  // embedding or LM head, bf16
  const double experts = routed_expert_bytes(m, run.dtype);
  const double rest = weight_bytes(m, run.dtype) - experts - 2 * emb_one;
  int first = 0;
  for (int s = 0; s < stage; ++s) first += layers[s];
  const int n = layers[stage];
  const int dense = m.has_moe ? m.moe.first_dense_layers : m.layers;
  const int moe_here = std::max(0, first + n - std::max(first, dense));
  const int moe_all = m.layers - dense;
  PpStageMemory st;
  st.stage = stage;
  const double mine_experts = moe_all > 0 ? experts * moe_here / moe_all : 0.0;
  double mine_rest = rest * n / m.layers;
  if (stage == 0) mine_rest += emb_one;
  if (stage + 1 == static_cast<int>(layers.size())) mine_rest += emb_one;
  // DP attention splits the experts over every rank, the rest over the attention group
  st.weight_bytes =
      run.layout.dp_attention ? mine_experts / run.tp_size + mine_rest / attn_tp : (mine_experts + mine_rest) / attn_tp;
  st.kv_bytes_per_token = double(n) * kv_bytes_per_token_layer(m, attn_tp, run.kv_cache_bytes);
  return st;
}

// The stage that needs the most memory at the run's batch and context (the draft counted on the last).
PpStageMemory pp_heaviest_stage(const ModelSpec& m, const RunSpec& run, int attn_tp, double draft_w, double draft_kv) {
  const std::vector<int> layers = pp_stage_layers(m.layers, run.layout.pp, run.layout.pp_split);
  const double tokens = double(run.layout.rank_batch(run.batch_size)) * double(run.context_len);
  PpStageMemory best;
  double most = -1;
  for (int s = 0; s < run.layout.pp; ++s) {
    PpStageMemory st = pp_stage_memory(m, run, attn_tp, s, layers);
    if (s + 1 == run.layout.pp) st.weight_bytes += draft_w, st.kv_bytes_per_token += draft_kv;
    const double need = st.weight_bytes + tokens * st.kv_bytes_per_token;
    if (need > most) most = need, best = st;
  }
  return best;
}

}  // namespace

double sglang_default_mem_fraction(double gpu_gib, const RunSpec& run) {
  const double gpu_mib = gpu_gib * kMiBPerGiB;
  // chunked_prefill_size by GPU memory: < 35 GB 2048, < 60 GB 4096, < 160 GB 8192, else 16384.
  const double chunked = gpu_mib < 35 * 1024 ? 2048 : gpu_mib < 60 * 1024 ? 4096 : gpu_mib < 160 * 1024 ? 8192 : 16384;
  double reserved_mib = 512 + std::max(chunked, 2048.0) * 1.5 + run.cuda_graph_max_bs * 2.0 +
                        run.tp_size * run.layout.pp / 8.0 * 1024;  // tp_size * pp_size / 8 GiB
  if (gpu_mib > 60 * 1024) reserved_mib = std::max(reserved_mib, 10.0 * 1024);
  if (run.speculative()) reserved_mib += 2 * 1024;  // EAGLE draft model and its CUDA graphs
  return std::max(0.0, (gpu_mib - reserved_mib) / gpu_mib);
}

long long MemoryFit::max_batch() const {
  if (!weights_fit() || !(kv_gib_per_request > 0)) return 0;
  // The same sum as fits(), so the batch printed is one that fits and the next one does not.
  long long b = static_cast<long long>(std::floor((budget_gib() - weights_gib) / kv_gib_per_request));
  while (b > 0 && weights_gib + double(b) * kv_gib_per_request > budget_gib()) --b;
  while (weights_gib + double(b + 1) * kv_gib_per_request <= budget_gib()) ++b;
  return b;
}

MemoryFit memory_fit(const ModelSpec& target, const ModelSpec* draft, const Hardware& hw, const RunSpec& run,
                     std::optional<double> fraction) {
  MemoryFit f;
  f.gpu_gib = hw.gpu.mem_gib;
  f.fraction_default = !fraction;
  f.fraction = fraction.value_or(sglang_default_mem_fraction(f.gpu_gib, run));
  f.reserved_gib = f.gpu_gib * (1 - f.fraction);
  const double gib = kMiBPerGiB * kMiBPerGiB * kMiBPerGiB;
  // DP attention: all but the routed experts are replicated over the DP ranks (split only tp / dp
  // ways), and each rank caches its own requests' KV (docs/model.md#parallel-layout).
  const int attn_tp = run.layout.attn_tp(run.tp_size);
  const double experts = run.layout.dp_attention ? routed_expert_bytes(target, run.dtype) : 0.0;
  double w = experts / run.tp_size + (weight_bytes(target, run.dtype) - experts) / attn_tp;
  const double context = double(run.context_len);
  double kv_per_request = kv_bytes_per_request(target, attn_tp, run.kv_cache_bytes, context);
  // the draft: under pipeline parallelism on the last stage
  const bool with_draft = draft && draft->is_draft() && run.speculative();  // another kind is refused later
  const double draft_w = with_draft ? weight_bytes(*draft, std::nullopt) / attn_tp : 0.0;
  const double draft_kv = with_draft ? kv_bytes_per_request(*draft, attn_tp, run.kv_cache_bytes, context) : 0.0;
  if (run.layout.pp > 1) {
    // per stage the KV of its layers at the full context (sliding-window layers not capped here)
    const PpStageMemory st = pp_heaviest_stage(target, run, attn_tp, draft_w, draft_kv / context);
    w = st.weight_bytes, kv_per_request = st.kv_bytes_per_token * context, f.pp_stage = st.stage;
  } else {
    w += draft_w, kv_per_request += draft_kv;
  }
  f.weights_gib = w / gib;
  f.weight_dtype = run.dtype.value_or(target.weight_dtype);
  f.kv_gib_per_request = kv_per_request / gib;
  f.kv_gib = double(run.layout.rank_batch(run.batch_size)) * f.kv_gib_per_request;
  return f;
}

std::optional<InputError> fit_refusal(const MemoryFit& f, const std::string& model, const Hardware& hw,
                                      const RunSpec& run) {
  if (f.fits()) return std::nullopt;
  std::string head = fmt::format("{} does not fit {}x {} at tp {}", model, hw.num_gpus, hw.gpu.name, run.tp_size);
  if (f.pp_stage >= 0)
    head += fmt::format(" x pp {} (its heaviest stage, {} of {})", run.layout.pp, f.pp_stage + 1, run.layout.pp);
  const std::string budget = fmt::format(
      "{:.1f} GiB x mem_fraction_static {:.3f}{} = {:.1f} GiB (activations and CUDA graphs take the "
      "other {:.1f} GiB)",
      f.gpu_gib, f.fraction, f.fraction_default ? " (SGLang's default)" : "", f.budget_gib(), f.reserved_gib);
  const std::string fraction_flag = f.fraction_default ? "" : ", --mem-fraction-static";
  if (!f.weights_fit()) {
    // Suggest fp8 only to weights wider than it (4-bit formats need a checkpoint in that format).
    const bool wider = dtype_bytes(f.weight_dtype) > dtype_bytes(DType::FP8);
    std::string fixes = "more GPUs (a larger --tp-size)";
    if (wider) fixes += ", smaller weights (--dtype fp8)";
    if (f.weight_dtype == DType::FP8) fixes += ", a 4-bit checkpoint of the model (int4/nvfp4/mxfp4 weights)";
    if (!f.fraction_default) fixes += ", a larger --mem-fraction-static";
    if (const auto comma = fixes.rfind(", "); comma != std::string::npos) fixes.replace(comma, 2, " or ");
    return InputError(fmt::format("{}: the weights alone take {:.1f} GiB per GPU > {}, so no batch fits (largest "
                                  "batch: 0): use {}",
                                  head, f.weights_gib, budget, fixes),
                      "--tp-size" + fraction_flag);
  }
  const long long most = f.max_batch();
  const std::string largest =
      most > 0
          ? fmt::format("the largest batch that fits at context {} and tp {} is {}", run.context_len, run.tp_size, most)
          : fmt::format(
                "not even one request of context {} fits at tp {} (largest batch: 0): use a shorter "
                "--context-len, more GPUs (a larger --tp-size) or a larger --mem-fraction-static than {:g}",
                run.context_len, run.tp_size, f.fraction);
  // Not even one request fits: the context is the cause, not the batch.
  return InputError(
      fmt::format("{}: weights {:.1f} GiB + KV cache {:.2f} GiB (batch {} x context {}) = {:.1f} GiB "
                  "per GPU > {}; {}",
                  head, f.weights_gib, f.kv_gib, run.batch_size, run.context_len, f.static_gib(), budget, largest),
      (most > 0 ? "--batch-size, --context-len" : "--context-len") + fraction_flag);
}

std::optional<InputError> fit_refusal(const Scenario& s) {
  const MemoryFit f = memory_fit(s.target, s.draft ? &*s.draft : nullptr, s.hw, s.run, s.run.mem_fraction_static);
  return fit_refusal(f, s.target.name, s.hw, s.run);
}

void require_fit(const MemoryFit& f, const std::string& model, const Hardware& hw, const RunSpec& run) {
  if (auto e = fit_refusal(f, model, hw, run)) throw *e;
}

}  // namespace specsim
