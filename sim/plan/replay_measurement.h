#pragma once
// What a GPU replay measured, per phase and op: the plan's measured counterpart. Data only, so
// the CUDA executor (kernels/replay) fills it without reaching up to the report that prints it
// (replay_report/).
#include <string>
#include <vector>

#include "plan/cycle_plan.h"

namespace specsim {

/// One distinct op of a block as replayed (its shape, and its time per call).
struct OpMeasurement {
  std::string block, name;
  int repeat = 1;                 ///< the block's repeat: calls per forward
  Op op;                          ///< shape, FLOPs, bytes from the plan (op.name is not kept: see `name`)
  DType ran_dtype = DType::BF16;  ///< what the GPU ran (fp8 falls back to bf16 without fp8 GEMMs)
  double measured_us = 0;         ///< per call: median over eager passes, mean over the block's repeats
  std::string note;               ///< e.g. how the op was approximated
  bool block_fp8 = false;         ///< an fp8 GEMM ran block-scaled (else cuBLASLt's per-tensor fp8)
};

/// One forward of one phase as replayed.
struct PhaseMeasurement {
  PhaseKind kind = PhaseKind::BaselineDecode;
  bool graph = true;
  int tokens = 0;
  int kernels = 0;              ///< kernels launched per forward (collectives left out)
  int collectives_skipped = 0;  ///< all-reduces and all-gathers of the plan not run
  double us = 0;                ///< one forward: median of graph replays, or of eager forwards
  /// Each op class alone, through the replay, in one CUDA graph (median replay): the GEMM chain,
  /// the attention kernels, the norms and elementwise kernels. -1: not measured.
  double gemm_us = -1, attention_us = -1, other_us = -1;
  /// Per-op CUDA-event times of an eager pass summed per class (they include launch gaps).
  double eager_gemm_us = 0, eager_attention_us = 0, eager_other_us = 0;
  double bare_gemm_chain_us = -1;  ///< gemm_us's GEMMs launched back to back in a bare graph
  /// Multi-GPU replay: the phase's all-reduces (all-gathers) alone in one graph, median. -1: not run.
  double allreduce_us = -1, allgather_us = -1;
  std::vector<OpMeasurement> ops;
};

struct ReplayMeasurement {
  std::string device;
  int iters = 0, warmup = 0;
  std::vector<PhaseMeasurement> phases;
  std::vector<std::string> notes;
  int gpus = 1;                   ///< > 1: collectives ran for real on this many GPUs
  std::string allreduce_backend;  ///< what ran the all-reduces when gpus > 1 ("nccl", "custom:auto")
  std::string launch;             ///< how the ranks ran when gpus > 1 (empty: one thread per GPU)
  bool shared_gpus = false;       ///< ranks shared GPUs: no NCCL, all-gathers left out, timings a functional check
};

/// The plan as one GPU replays it: every collective removed (tp 1 has none; at tp > 1 this is
/// one rank's share with the all-reduces and all-gathers left out).
CyclePlan strip_collectives(const CyclePlan& plan);

/// A phase plan rebuilt from measured ops (blocks in order, with their repeats) for re-prediction.
PhasePlan plan_of(const PhaseMeasurement& m);

}  // namespace specsim
