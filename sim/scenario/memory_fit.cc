#include "scenario/memory_fit.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.h"

namespace specsim {

namespace {

constexpr double kMiBPerGiB = 1024.0;
constexpr double kKvBytes = 2.0;  // bf16 KV cache (the only KV dtype modelled)

// Weight bytes of one copy: embeddings and lm_head in bf16, the rest in the weight dtype.
double weight_bytes(const ModelSpec& m, std::optional<DType> dtype) {
  const double emb = 2.0 * double(m.hidden) * (m.is_draft() ? m.draft_vocab : m.vocab);
  return (m.param_count() - emb) * dtype_bytes(dtype.value_or(m.weight_dtype)) + emb * 2.0;
}

// KV bytes per cached token on one rank, every layer.
double kv_bytes_per_token(const ModelSpec& m, int tp) {
  return double(m.layers) * kv_bytes_per_token_layer(m, tp, kKvBytes);
}

}  // namespace

double sglang_default_mem_fraction(double gpu_gib, const RunSpec& run) {
  const double gpu_mib = gpu_gib * kMiBPerGiB;
  // chunked_prefill_size by GPU memory: < 35 GB 2048, < 60 GB 4096, < 160 GB 8192, else 16384.
  const double chunked = gpu_mib < 35 * 1024 ? 2048 : gpu_mib < 60 * 1024 ? 4096 : gpu_mib < 160 * 1024 ? 8192 : 16384;
  double reserved_mib = 512 + std::max(chunked, 2048.0) * 1.5 + run.cuda_graph_max_bs * 2.0 + run.tp_size / 8.0 * 1024;
  if (gpu_mib > 60 * 1024) reserved_mib = std::max(reserved_mib, 10.0 * 1024);
  if (run.speculative()) reserved_mib += 2 * 1024;  // EAGLE draft model and its CUDA graphs
  return std::max(0.0, (gpu_mib - reserved_mib) / gpu_mib);
}

MemoryFit memory_fit(const ModelSpec& target, const ModelSpec* draft, const Hardware& hw, const RunSpec& run,
                     std::optional<double> fraction) {
  MemoryFit f;
  f.gpu_gib = hw.gpu.mem_gib;
  f.fraction_default = !fraction;
  f.fraction = fraction.value_or(sglang_default_mem_fraction(f.gpu_gib, run));
  f.reserved_gib = f.gpu_gib * (1 - f.fraction);
  const double gib = kMiBPerGiB * kMiBPerGiB * kMiBPerGiB;
  double w = weight_bytes(target, run.dtype) / run.tp_size;
  double kv_per_token = kv_bytes_per_token(target, run.tp_size);
  if (draft && draft->is_draft() && run.speculative()) {  // another kind of draft is refused later
    w += weight_bytes(*draft, std::nullopt) / run.tp_size;
    kv_per_token += kv_bytes_per_token(*draft, run.tp_size);
  }
  f.weights_gib = w / gib;
  f.kv_gib = double(run.batch_size) * double(run.context_len) * kv_per_token / gib;
  return f;
}

void require_fit(const MemoryFit& f, const std::string& model, const Hardware& hw, const RunSpec& run) {
  if (f.fits()) return;
  throw InputError(
      fmt::format("{} does not fit {}x {} at tp {}: weights {:.1f} GiB + KV cache {:.2f} GiB (batch {} x context {}) = "
                  "{:.1f} GiB per GPU > {:.1f} GiB x mem_fraction_static {:.3f}{} = {:.1f} GiB (activations and CUDA "
                  "graphs take the other {:.1f} GiB)",
                  model, hw.num_gpus, hw.gpu.name, run.tp_size, f.weights_gib, f.kv_gib, run.batch_size,
                  run.context_len, f.static_gib(), f.gpu_gib, f.fraction,
                  f.fraction_default ? " (SGLang's default)" : "", f.budget_gib(), f.reserved_gib),
      f.fraction_default ? "--tp-size" : "--mem-fraction-static");
}

}  // namespace specsim
