#pragma once
// Whether a model fits the GPUs the way SGLang lays out memory: the static part (weights and the
// KV-cache pool) gets GPU memory x mem_fraction_static; activations and CUDA-graph buffers live
// in the rest. SGLang's default fraction reserves that rest from the GPU's memory, the chunked
// prefill size, the graph batch size, tp x pp and the speculative algorithm.
#include <optional>
#include <string>

#include "scenario/hardware.h"
#include "scenario/model_spec.h"
#include "scenario/run_spec.h"
#include "scenario/scenario.h"
#include "util/error.h"

namespace specsim {

/// Per-GPU memory of one run, GiB. Under pipeline parallelism: of a GPU of the stage that needs
/// the most (each stage holds its layers' weights and their KV cache for every request).
struct MemoryFit {
  double gpu_gib = 0;
  double fraction = 0;  ///< mem_fraction_static used
  bool fraction_default = true;
  double reserved_gib = 0;           ///< activations and CUDA-graph buffers (1 - fraction)
  double weights_gib = 0;            ///< target + draft weights, tensor-parallel share
  DType weight_dtype = DType::BF16;  ///< the target's linear-layer weights (--dtype or its config's)
  double kv_gib_per_request = 0;  ///< KV cache of one request of context tokens (at --kv-cache-dtype), target + draft
  double kv_gib = 0;              ///< KV cache of batch x context tokens: batch x kv_gib_per_request
  int pp_stage = -1;              ///< under pipeline parallelism the stage these figures are of (its heaviest), else -1
  double static_gib() const { return weights_gib + kv_gib; }
  double budget_gib() const { return gpu_gib * fraction; }
  bool fits() const { return static_gib() <= budget_gib(); }
  /// Whether the weights alone fit the budget (if not, no batch does).
  bool weights_fit() const { return weights_gib <= budget_gib(); }
  /// The largest batch whose KV cache fits beside the weights at this context and tp (0 when the
  /// weights alone, or one request, do not fit).
  long long max_batch() const;
};

/// SGLang's default mem_fraction_static for this GPU and run (server_args.py,
/// _handle_gpu_memory_settings since sgl-project/sglang PR 10975).
double sglang_default_mem_fraction(double gpu_gib, const RunSpec& run);

/// The per-GPU memory of `run`; `fraction` overrides SGLang's default.
MemoryFit memory_fit(const ModelSpec& target, const ModelSpec* draft, const Hardware& hw, const RunSpec& run,
                     std::optional<double> fraction);

/// The refusal when the static memory does not fit (nullopt when it fits): what does not fit
/// (the weights alone: more GPUs or a smaller dtype, named --tp-size; else the KV cache of batch x
/// context, named --batch-size, --context-len, or --context-len when not even one request fits),
/// the numbers, and the largest batch that fits at this context and tp (0 when none does).
/// --mem-fraction-static is named too when it was given.
std::optional<InputError> fit_refusal(const MemoryFit& f, const std::string& model, const Hardware& hw,
                                      const RunSpec& run);

/// fit_refusal() of a scenario's own run (its target, draft, hardware and mem_fraction_static).
std::optional<InputError> fit_refusal(const Scenario& s);

/// Throws fit_refusal()'s error when the static memory does not fit.
void require_fit(const MemoryFit& f, const std::string& model, const Hardware& hw, const RunSpec& run);

}  // namespace specsim
