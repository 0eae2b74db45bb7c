#pragma once
// Internal to kernels/replay: one phase of a plan run and timed on one rank's GPU.
#include "plan/cycle_plan.h"
#include "plan/replay_measurement.h"
#include "rank_gpu.h"
#include "replay_exec.h"

namespace specsim::replay::detail {

/// Weights and KV are re-read only after this many times the L2 of other traffic (the rotation).
constexpr double kRotateL2Multiple = 4.0;

/// Prepares every op of `ph` (op_prep.h), allocates and fills its buffers on `g`, and times the
/// phase: as the plan runs it (one CUDA graph, or eager launches; median of opt.iters), each op
/// class alone in a graph, each op from opt.op_passes eager passes, and (opt.gemm_chain) the
/// GEMMs alone through a fresh cuBLASLt handle. Every rank passes g.sync() before each timed
/// launch. Throws std::runtime_error on a CUDA, cuBLAS or NCCL failure or when the phase's
/// weights and KV do not fit the free memory.
PhaseMeasurement run_phase(RankGpu& g, const PhasePlan& ph, const ReplayOptions& opt);

}  // namespace specsim::replay::detail
