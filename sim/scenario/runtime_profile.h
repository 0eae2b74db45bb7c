#pragma once
// The serving runtime's own work besides the forwards (models/runtime/<name>.json): the terms
// SGLang's EAGLE worker or vLLM's EAGLE proposer spend per draft step, per cycle and per plain
// decode step, each with its kind (host: Python/CPU, scales with the CPU; gpu: small kernels).
#include <array>
#include <string>
#include <vector>

#include "scenario/run_spec.h"

namespace specsim {

/// One term of a runtime profile.
struct RuntimeTerm {
  std::string name;  ///< the JSON key, unit in the name (`_us`, `_us_per_token`, ...)
  enum class Section { DraftStep, Cycle, PlainStep } section = Section::Cycle;
  /// From the name's suffix: once, per token of the phase, per accepted token, per request of
  /// the batch.
  enum class Per { Once, Token, AcceptedToken, Request } per = Per::Once;
  enum class Times { Steps, DraftForwards } times = Times::Steps;  ///< per_draft_step terms only
  double value_us = 0;
  bool host = true;  ///< kind "host" (else "gpu")
  bool graphed = false;
  int kernels = 0;
  int syncs = 0;
  bool counted_by_forward = false;  ///< already in the forward model (a graph replay's launch)
  /// Fitted to a published run, not counted from the code (its note starts "fitted"): `source`
  /// names the run. A cycle that rests on such terms says how much (report: fitted host share).
  bool fitted = false;
  std::string source;
  /// The term's `when`: always, or only when a request samples (temperature > 0), for tree
  /// drafts (topk > 1), for EAGLE-3 drafts (aux hidden states of the target), when the
  /// draft's vocabulary is smaller than the target's, or when the run's attention is SGLang's
  /// FlashInfer backend for MHA models (RunSpec::verify_custom_mask: its draft plans each step).
  enum class When { Always, Sampling, Tree, Eagle3, DraftVocabMap, FlashInfer } when = When::Always;
  double vocab_basis = 0;    ///< per-token terms over a vocabulary: the vocab `value_us` is for
  bool cycle_phase = false;  ///< phase "cycle": between forwards, booked on verify
  PhaseKind phase = PhaseKind::Verify;
};

/// A whole profile: the terms plus what they were counted on.
struct RuntimeProfile {
  std::string name;                   ///< "sglang", "vllm"
  std::string file;                   ///< where it was read (models/runtime/vllm-0.10.json, or the path given)
  std::string applies_to;             ///< the releases and code paths the terms describe ("" if unstated)
  bool overlap_plain_decode = false;  ///< the plain step's host work hides under the GPU step
  double host_op_us = 0;              ///< host cost of one eager op the host terms were counted with
  double graphed_kernel_us = 0;       ///< per graphed small kernel, in the GPU terms
  double eager_kernel_gpu_us = 0;     ///< per eager small kernel, in the GPU terms
  double reference_mem_bw_gbps = 0;   ///< HBM bandwidth the per-token GPU terms were counted at
  double host_scale = 1;              ///< fitted multiplier on every host term
  std::vector<RuntimeTerm> terms;
  /// per speculative phase: its host work runs while the GPU executes its forwards (no sync
  /// between them), so only host time past the forward shows (`host_overlaps_forward`)
  std::array<bool, kNumPhaseKinds> host_overlaps_forward{};
  /// per phase: its overlap is lost when the run's attention is SGLang's FlashInfer backend
  /// (RunSpec::verify_custom_mask), whose plans read the host's copy of the GPU's index arrays
  /// (`host_overlaps_forward.not_on_flashinfer`)
  std::array<bool, kNumPhaseKinds> overlap_lost_on_flashinfer{};
};

/// Loads models/runtime/<name>.json (or a path ending in .json). Every term's value must be
/// finite and non-negative with a source; InputError naming file:field otherwise.
RuntimeProfile load_runtime_profile(const std::string& name_or_path, const std::string& flag = "--runtime");

/// Whether a --runtime value is vLLM's: `vllm` (the current release's profile), `vllm-REL` (an
/// earlier release's, models/runtime/vllm-0.10.json), or a profile file whose runtime is vllm;
/// vLLM's defaults apply to all of them.
bool is_vllm_runtime(const std::string& name);

}  // namespace specsim
