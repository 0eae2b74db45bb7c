#pragma once
// The parallel layout beyond one tensor-parallel group, as SGLang spells it: expert parallelism
// (--ep-size, --moe-a2a-backend, --deepep-mode), DP attention (--enable-dp-attention --dp N) and
// pipeline parallelism (--pp-size N: N stages of tp GPUs each).
// docs/model.md#parallel-layout says what each changes in the plan.
#include <optional>
#include <string>
#include <vector>

#include "scenario/pipeline_stages.h"

namespace specsim {

/// How MoE tokens reach the experts. None: every rank holds every token and the experts' partial
/// outputs are summed by the all-reduce (SGLang's default, also with --ep-size). DeepEP: dispatch
/// and combine all-to-all (SGLang's --moe-a2a-backend deepep). Nccl: the same all-to-all through
/// NCCL's send/recv, a specsim option for comparison (SGLang v0.5.2 does not offer it).
enum class A2aBackend { None, DeepEP, Nccl };
/// DeepEP's kernels: normal (throughput, no CUDA graph) or low latency (CUDA graph, a token cap).
enum class DeepEPMode { Auto, Normal, LowLatency };

struct ParallelLayout {
  int ep = 1;                 ///< expert-parallel size: routed experts split ep ways (1: every rank holds all)
  int dp = 1;                 ///< DP attention ranks (1: off)
  bool dp_attention = false;  ///< --enable-dp-attention
  A2aBackend a2a = A2aBackend::None;
  DeepEPMode deepep_mode = DeepEPMode::Auto;
  double ep_imbalance = 1.0;                   ///< the busiest rank's routed pairs over the mean (1: balanced)
  int pp = 1;                                  ///< pipeline stages, each a TP group of tp GPUs (1: off)
  PpSplitRule pp_split = PpSplitRule::SGLang;  ///< whose rule splits the layers into stages

  bool active() const { return reshapes_layers() || pp > 1; }
  /// Whether a decoder layer's ops differ from one TP group's (pipeline stages leave layers as they are).
  bool reshapes_layers() const { return ep > 1 || dp_attention || a2a != A2aBackend::None; }
  /// Ranks that run one DP rank's attention (SGLang's attn_tp_size): tp / dp.
  int attn_tp(int tp) const { return dp_attention ? tp / dp : tp; }
  /// Requests one DP rank holds: the batch split evenly, the largest share (the ranks wait for it).
  int rank_batch(int batch) const { return dp_attention ? (batch + dp - 1) / dp : batch; }
  /// Requests one forward runs on: a DP rank's share, split evenly over the pp micro-batches
  /// SGLang's pipeline loop keeps in flight (the largest one; docs/model.md#pipeline-parallelism).
  int micro_batch(int batch) const { return (rank_batch(batch) + pp - 1) / pp; }
  /// The DeepEP kernels a decode-batch forward runs: auto picks low latency, as SGLang does for
  /// every forward that is not an extend (a speculative cycle's verify and draft forwards are
  /// scheduled as decode batches).
  bool low_latency() const { return deepep_mode != DeepEPMode::Normal; }
};

std::string a2a_backend_name(A2aBackend b);
std::string deepep_mode_name(DeepEPMode m);

/// The layout flags as given (RunArgs holds one).
struct ParallelArgs {
  std::optional<int> ep_size, dp_size, pp_size;
  bool enable_dp_attention = false;
  std::optional<std::string> moe_a2a_backend, deepep_mode;
  std::optional<double> ep_imbalance;
  bool given() const {
    return ep_size || dp_size || pp_size || enable_dp_attention || moe_a2a_backend || deepep_mode || ep_imbalance;
  }
};

/// The layout from its flags for a run of `tp` ranks on a model with `routed_experts` (0: dense);
/// InputError naming the flag for what SGLang refuses or the model cannot express. `notes` gets
/// what SGLang adjusts (DeepEP sets ep = tp).
ParallelLayout parse_layout(const ParallelArgs& a, int tp, int routed_experts, std::vector<std::string>& notes);

}  // namespace specsim
