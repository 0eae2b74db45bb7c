#pragma once
// The GPU replay: runs a CyclePlan's phases on GPU 0 (cuBLASLt GEMMs, a KV-streaming attention
// kernel, memory kernels for norms and elementwise ops; collectives left out) and times them.
#include <string>

#include "plan/cycle_plan.h"
#include "measured/replay_result.h"

namespace specsim::replay {

struct ReplayOptions {
  int iters = 50;         ///< timed graph replays (eager forwards: at most 10) per phase
  int warmup = 10;        ///< untimed replays first
  int op_passes = 3;      ///< eager per-op passes; the median per op is kept
  bool gemm_chain = true; ///< also time the phase's GEMMs alone, through the replay and bare
};

/// A single-process multi-GPU replay: one thread per GPU, rank r on GPU r.
struct MultiGpuOptions {
  int gpus = 2;                  ///< ranks = GPUs = the plan's tp
  bool custom = false;           ///< all-reduces through the custom kernel, else NCCL
  std::string variant = "auto";  ///< custom variant (auto, one-shot-pull, one-shot-push, two-shot)
};

/// CUDA devices visible (0 when there is no driver or no GPU).
int cuda_device_count();

/// Replays every phase of `plan` on GPU 0 with the collectives left out. Throws
/// std::runtime_error on a CUDA or cuBLAS failure (with the call that failed).
ReplayMeasurement replay_plan(const CyclePlan& plan, const ReplayOptions& opt);

/// Replays every phase of a tp = `mg.gpus` plan on GPUs 0..gpus-1, one thread per GPU, with the
/// plan's all-reduces and all-gathers run for real in the plan's order (NCCL via ncclCommInitAll,
/// or the custom all-reduce in single-process mode; all-gathers always NCCL). Every rank launches
/// each timed replay after a barrier; phase time = slowest rank's median. Throws on failure.
ReplayMeasurement replay_plan_multi_gpu(const CyclePlan& plan, const ReplayOptions& opt, const MultiGpuOptions& mg);

}  // namespace specsim::replay
