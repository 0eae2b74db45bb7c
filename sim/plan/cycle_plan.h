#pragma once
// The CyclePlan: every forward of one EAGLE cycle (and the plain decode step) as ordered ops per
// rank, as SGLang's EAGLEWorker runs them (docs/sources.md#S-sglang-eagle-cycle). Built once from
// model + settings; both the analytic engine and the GPU replay read it.
#include <vector>

#include "plan/op.h"
#include "scenario/hardware.h"
#include "scenario/model_spec.h"
#include "scenario/run_spec.h"

namespace specsim {

/// Ops that repeat as a unit (a decoder layer runs `repeat` times with the same shapes).
struct OpBlock {
  const char* name = "";
  int repeat = 1;
  std::vector<Op> ops;
};

struct PhasePlan {
  PhaseKind kind = PhaseKind::BaselineDecode;
  int count = 1;      ///< forwards of this phase per cycle (baseline: per step)
  int tokens = 0;     ///< tokens in one forward (whole batch)
  bool graph = true;  ///< replayed from a CUDA graph; eager otherwise
  std::vector<OpBlock> blocks;

  int kernels() const;                   ///< ops in one forward, repeats counted
  int count_of(OpKind k) const;          ///< ops of one kind in one forward
  double comm_bytes_of(OpKind k) const;  ///< summed payload of one kind in one forward
};

struct CyclePlan {
  int tp = 1;
  int batch = 1;
  ParallelLayout layout;  ///< expert parallelism and DP attention (default: one TP group)
  /// Ranks of collective `op`: its own group, else the tensor-parallel group.
  int group_of(const Op& op) const { return op.group > 0 ? op.group : tp; }
  std::vector<PhasePlan> phases;  ///< draft_decode (if steps > 1), verify, draft_extend, baseline_decode
  /// The phase of that kind, or nullptr when the cycle has none.
  const PhasePlan* find(PhaseKind k) const;
  /// The largest payload of one op of kind `k` in any phase, bytes (0 when there is none).
  double max_comm_bytes_of(OpKind k) const;
};

/// Lays out the cycle as SGLang runs it. `draft` may be null when speculation is off.
/// InputError (naming --tp-size etc.) when the shapes cannot be split that way.
CyclePlan build_plan(const ModelSpec& target, const ModelSpec* draft, const RunSpec& run);

/// DeepEP's low-latency kernels take at most this many tokens per rank per forward (SGLang's
/// SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK default, v0.5.2).
constexpr int kDeepEPMaxTokensPerRank = 128;

/// Expected number of distinct routed experts T tokens touch when each picks k of E uniformly:
/// E * (1 - (1 - k/E)^T). Not T*k: tokens share experts.
double expected_distinct_experts(double tokens, int experts, int k);

}  // namespace specsim
