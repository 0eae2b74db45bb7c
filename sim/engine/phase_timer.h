#pragma once
// Time of one forward: ops in order on each rank, CUDA-graph replay or eager host launches.
#include "engine/op_cost.h"
#include "plan/cycle_plan.h"

namespace specsim {

/// One forward of a phase, broken down by op class (microseconds). `us` is the sum of the parts.
struct PhaseTiming {
  PhaseKind kind = PhaseKind::BaselineDecode;
  int count = 1;
  int tokens = 0;
  bool graph = true;
  int kernels = 0;
  double us = 0;
  double gemm_us = 0, attention_us = 0, allreduce_us = 0, allgather_us = 0, other_us = 0;
  double launch_us =
      0;  ///< GPU time between kernels: graph launch + kernel switches, or idle waiting for eager host launches
  double switch_us = 0;         ///< of launch_us in a graph phase: gaps where a kernel follows one of another class
  double overhead_us = 0;       ///< unexplained per-forward time from the measured baseline anchor
  double spec_overhead_us = 0;  ///< the runtime's own work around this forward as it adds to `us`
                                ///< (models/runtime/: scheduling, tree/accept bookkeeping, syncs)
  double runtime_host_us = 0;   ///< of the runtime's work: host (Python) time, before overlap
  double runtime_gpu_us = 0;    ///< of the runtime's work: its small kernels
  int allreduce_count = 0, allgather_count = 0;
  double allreduce_bytes = 0, allgather_bytes = 0;
  /// MoE dispatch and combine (expert parallelism with an all-to-all backend); reduce-scatters
  /// count with the all-gathers (allgather_*).
  double alltoall_us = 0, alltoall_bytes = 0;
  int alltoall_count = 0;
  double p2p_us = 0, p2p_bytes = 0;  ///< pipeline stage hand-offs (send/recv), one forward
  int p2p_count = 0;
};

/// Times one forward. Eager phases follow the host: kernel i starts at max(its launch, the end of
/// kernel i-1); repeated layers are composed in closed form, so the cost is per distinct op.
PhaseTiming time_phase(const PhasePlan& phase, const CostContext& ctx);

}  // namespace specsim
