#pragma once
// Internal to the fused all-reduce + residual add + RMSNorm: the launch arguments the host code
// (car_comm.cc, car_fused_select.cc) hands the kernels (car_fused_norm.cu).
#include <cstddef>

#include "car_layout.h"

namespace specsim::car::detail {

/// Most threads a block of the fused kernels (one block normalizes one row at a time).
inline constexpr int kFusedMaxThreads = 512;
/// Most 16-byte vectors a thread holds in registers between the reduce and the norm.
inline constexpr int kFusedMaxHeld = 4;

/// A rank's buffers besides LaunchArgs::r[].in (the partial sums) and .out (the norm output).
struct FusedRank {
  const void* residual_in;
  void* residual_out;
  const void* weight;
  void* quant_out;  ///< fp8 e4m3, or null
};

/// One launch: `base` as for a flag-free all-reduce (count = tokens x hidden), plus the rows.
struct FusedLaunchArgs {
  LaunchArgs base;
  FusedRank f[kMaxRanks];
  std::size_t tokens;     ///< rows
  std::size_t hidden;     ///< elements a row
  float eps;              ///< RMSNorm epsilon
  float quant_inv_scale;  ///< 1 / quant_scale
};
static_assert(sizeof(FusedLaunchArgs) < 4000, "kernel parameters must stay under 4 KB");

}  // namespace specsim::car::detail
