#pragma once
// The GPU replay: runs a CyclePlan's phases on GPU 0 (cuBLASLt GEMMs, a KV-streaming attention
// kernel, memory kernels for norms and elementwise ops; collectives left out) and times them.
// Several ranks: thread_ranks.h (one thread per GPU) and replay_mpi.h (one process per rank).

#include <string>

#include "plan/cycle_plan.h"
#include "plan/replay_measurement.h"

namespace specsim::replay {

struct ReplayOptions {
  int iters = 50;          ///< timed graph replays (eager forwards: at most 10) per phase
  int warmup = 10;         ///< untimed replays first
  int op_passes = 3;       ///< eager per-op passes; the median per op is kept
  bool gemm_chain = true;  ///< also time the phase's GEMMs alone, through the replay and bare
};

/// A multi-rank replay's all-reduce backend as its report names it: nccl, custom:VARIANT or custom:fused.
inline std::string backend_label(bool custom, bool fused_norm, const std::string& variant) {
  return !custom ? "nccl" : fused_norm ? "custom:fused" : "custom:" + variant;
}

/// CUDA devices visible (0 when there is no driver or no GPU).
int cuda_device_count();

/// Replays every phase of `plan` on GPU 0 with the collectives left out. Throws
/// std::runtime_error on a CUDA or cuBLAS failure (with the call that failed).
ReplayMeasurement replay_plan(const CyclePlan& plan, const ReplayOptions& opt);

}  // namespace specsim::replay
