#pragma once
// Internal to kernels/replay: one op of a plan made ready to launch - how it runs (cuBLASLt GEMM,
// the replay's attention or memory kernel, a collective), its shape and cuBLASLt algorithm, and
// the report entry it fills. Device buffers are allocated later, by the phase runner.
#include <cstddef>
#include <memory>
#include <vector>

#include "block_fp8_gemm.h"
#include "gemm_runner.h"
#include "plan/cycle_plan.h"
#include "plan/replay_measurement.h"
#include "rank_gpu.h"
#include "replay_kernels.h"

namespace specsim::replay::detail {

/// How an op runs on the GPU.
enum class How { Gemm, Attention, Memory, AllReduceNccl, AllReduceCustom, AllReduceFused, AllGather };

/// One op ready to launch.
struct PreparedOp {
  const Op* op = nullptr;
  OpMeasurement meta;  ///< the report entry (its measured_us filled after timing)
  How how = How::Memory;
  GemmShape gs;
  std::unique_ptr<LtGemm> gemm;    ///< cuBLASLt GEMMs (null for block-scaled fp8 ones)
  std::size_t w_scale_offset = 0;  ///< block-scaled fp8: where W's fp32 scales start in a slot
  std::size_t slot_bytes = 0;      ///< weights or KV per rotation slot
  std::vector<DevBuf> rot;         ///< the rotation slots (phase runner)
  std::size_t vec16 = 0;           ///< memory ops: 16-byte vectors read (and as many written)
  AttentionLaunch attn;            ///< split-KV grid of an attention op
  std::size_t elems = 0;           ///< collectives: bf16 elements per rank (all-gather: sent by each rank)
  car::FusedNormShape fused;       ///< AllReduceFused: the boundary's rows and hidden size
};

/// One block of a phase: its ops and how many weight/KV slots they rotate through.
struct PreparedBlock {
  const OpBlock* block = nullptr;
  int nrot = 1;
  std::vector<PreparedOp> ops;
};

/// Prepares `op` of block `b` for the rank's GPU `g`: fp8 GEMMs run as the block-scaled fp8
/// kernel, as bf16 where the GPU has no fp8 tensor cores or the shape does not fit it (said in
/// the op's note), all-reduces go to the custom kernel when `g` has one
/// and the payload fits its buffer, else NCCL. Throws std::runtime_error when the op cannot run
/// (no cuBLASLt algorithm, a collective without the communicator it needs).
PreparedOp prepare_op(const RankGpu& g, const Op& op, const OpBlock& b);

/// Whether `op` is a layer boundary's add+RMSNorm that runs inside the fused all-reduce on `g`
/// (`--allreduce custom:fused`), as the engine drops it (engine/op_cost.cc fused_away): a
/// boundary norm whose all-reduce fits the fused kernel's 1 MiB.
bool norm_fused_away(const RankGpu& g, const Op& op);

}  // namespace specsim::replay::detail
