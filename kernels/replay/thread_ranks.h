#pragma once
// The single-process multi-GPU replay (`specsim replay --num-gpus N`): one thread per GPU,
// rank r on GPU r, NCCL from ncclCommInitAll or the custom all-reduce in single-process mode.
#include <stdexcept>
#include <string>

#include "replay_exec.h"

namespace specsim::replay {

/// A single-process multi-GPU replay: one thread per GPU, rank r on GPU r.
struct MultiGpuOptions {
  int gpus = 2;                  ///< ranks = GPUs = the plan's tp
  bool custom = false;           ///< all-reduces through the custom kernel, else NCCL
  std::string variant = "auto";  ///< custom variant (auto, one-shot-pull, one-shot-push, two-shot)
  bool fused_norm = false;       ///< custom:fused: layer boundaries fused with the add + RMSNorm
  /// The backend as the report names it: nccl, custom:VARIANT or custom:fused.
  std::string backend() const { return backend_label(custom, fused_norm, variant); }
  double stuck_wait_s = 60;  ///< after a rank fails, how long its peers may take to finish
};

/// A rank failed and its peers did not finish within MultiGpuOptions::stuck_wait_s: their
/// threads stay blocked inside a collective no one can cancel, so the process cannot shut down
/// cleanly. what() names the failure; the caller reports it and ends the process at once
/// (std::_Exit), without returning through static destructors.
struct StuckRanksError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Replays every phase of a tp = `mg.gpus` plan on GPUs 0..gpus-1, one thread per GPU, with the
/// plan's all-reduces and all-gathers run for real in the plan's order (NCCL via ncclCommInitAll,
/// or the custom all-reduce in single-process mode; all-gathers always NCCL). Every rank launches
/// each timed replay after a barrier; phase time = slowest rank's median. Needs
/// NCCL_NVLS_ENABLE=0 set by the program. Throws std::runtime_error naming the first rank that
/// failed, or StuckRanksError when its peers did not finish in time.
ReplayMeasurement replay_plan_multi_gpu(const CyclePlan& plan, const ReplayOptions& opt, const MultiGpuOptions& mg);

}  // namespace specsim::replay
