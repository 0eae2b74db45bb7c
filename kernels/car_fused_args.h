#pragma once
// Internal to the fused all-reduce + residual add + RMSNorm: the launch arguments the host code
// (car_comm.cc, car_fused_host.cc) hands the kernels (car_fused_norm.cu).
#include <cstddef>

#include "car_layout.h"

namespace specsim::car::detail {

/// Most threads a CTA of the fused kernels (a cluster of CTAs normalizes one row at a time).
inline constexpr int kFusedMaxThreads = 256;
/// Most CTAs sharing a row: one thread-block cluster (8 is the portable cluster size on sm_90).
inline constexpr int kFusedMaxCluster = 8;
/// A row is split over the fewest CTAs that leave each at most this many 16-byte vectors, so that
/// a thread reduces one vector, as one-shot-ll's 128-thread blocks do.
inline constexpr int kFusedCtaVectors = 128;
/// 16-byte vectors a thread holds in registers between the reduce and the norm: one, since
/// kFusedMaxHidden / 8 vectors split over kFusedMaxCluster CTAs fit kFusedMaxThreads threads.
inline constexpr int kFusedMaxHeld = 1;

/// Most threads a CTA of the block variant (one CTA a row: its C slices side by side).
inline constexpr int kFusedBlockMaxThreads = 1024;

/// The kernels' names for FusedVariant (custom_allreduce.h), in its order.
enum FusedMode : int { kFusedCluster = 0, kFusedClusterPush = 1, kFusedBlock = 2, kFusedSplit = 3, kFusedTwoShot = 4 };

/// 64-bit words of a rank's split-variant partials: [row parity][CTA] (car_fused_norm.cu).
inline constexpr int kFusedPartialWords = 2 * kMaxBlocks;

/// A rank's buffers besides LaunchArgs::r[].in (the partial sums) and .out (the norm output).
struct FusedRank {
  const void* residual_in;
  void* residual_out;
  const void* weight;
  void* quant_out;  ///< fp8 e4m3, or null
  /// split variant: this rank's kFusedPartialWords words (zeroed once, never reset), else null
  unsigned long long* partials;
};

/// One launch: `base` as for a flag-free all-reduce (count = tokens x hidden; base.blocks = CTAs
/// a rank, a multiple of `cluster`), plus the rows.
struct FusedLaunchArgs {
  LaunchArgs base;
  FusedRank f[kMaxRanks];
  std::size_t tokens;     ///< rows
  std::size_t hidden;     ///< elements a row
  float eps;              ///< RMSNorm epsilon
  float quant_inv_scale;  ///< 1 / quant_scale
  int cluster;            ///< CTAs a row (thread-block cluster size: 1, 2, 4 or 8); block: thread groups a row;
                          ///< two-shot: the row's slices, slice c owned by rank c % world
  int mode;               ///< FusedMode
};
static_assert(sizeof(FusedLaunchArgs) < 4000, "kernel parameters must stay under 4 KB");

}  // namespace specsim::car::detail
