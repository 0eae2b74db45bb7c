#pragma once
// What each kernel file hands the launcher (car_launch.cu). A family's kernels are defined, and
// instantiated for bf16, fp16 and fp32, in its own file and stay internal to it: nvcc compiles
// every .cu whole (no relocatable device code) and cannot launch a __global__ template defined in
// another file, so a file launches its kernels itself (the barrier kernels) or hands out their
// addresses (the flag-free ones, which car_launch.cu launches with programmatic dependent launch).
// T is __nv_bfloat16, __half or float.
#include <cuda_runtime_api.h>

#include "car_fused_args.h"
#include "car_layout.h"

namespace specsim::car::detail {

/// A kernel's address, for cudaLaunchKernelEx and the occupancy query.
using Kernel = void (*)(const LaunchArgs);

/// car_barrier_kernels.cu: launches one-shot pull, one-shot push or two-shot on `grid` (blocks,
/// ranks) with kThreads threads a block; any other variant: cudaErrorInvalidValue, nothing launched.
template <typename T>
cudaError_t launch_barrier(const LaunchArgs& a, Variant v, dim3 grid, cudaStream_t stream);
/// Max resident blocks per SM of the heaviest of those three kernels.
template <typename T>
int barrier_occupancy();

/// car_ll_one_shot.cu: one-shot-ll (kPull false) or one-shot-ll-pull. World 2 has its own
/// instantiation, any other world (or 0) the any-world one.
template <typename T, bool kPull>
Kernel flag_free_for(int world);
/// car_ll_two_shot.cu: two-shot-ll (one instantiation: any world).
template <typename T>
Kernel two_shot_ll_for();
/// car_ll_bcast.cu: one-shot-ll-bcast. World 2 has its own instantiation, any other world (or 0)
/// the any-world one.
template <typename T>
Kernel bcast_for(int world);

/// car_fused_norm.cu: launches the fused all-reduce + residual add + RMSNorm on grid (a.base.blocks,
/// a.base.ranks) with a.base.threads threads and programmatic dependent launch; T is __nv_bfloat16
/// or __half. A shape the kernel cannot run (threads, held vectors): cudaErrorInvalidConfiguration,
/// nothing launched.
template <typename T>
cudaError_t launch_fused(const FusedLaunchArgs& a, cudaStream_t stream);
/// car_fused_norm.cu: the separate add+RMSNorm kernel on grid (rows, a.base.ranks), one block a row
/// (only a.base.r[].in/.out, a.f[], tokens, hidden, eps, quant_inv_scale, threads, cluster, mode
/// are read; mode: the cluster kernel for the cluster modes, one CTA a row for the others).
template <typename T>
cudaError_t launch_add_rmsnorm(const FusedLaunchArgs& a, cudaStream_t stream);
/// A fused kernel's address (launched by car_fused_norm.cu's launch_fused).
using FusedKernel = void (*)(const FusedLaunchArgs);
/// car_fused_two_shot.cu: the fused kernel of the two-shot variant (one instantiation: any world).
template <typename T>
FusedKernel fused_two_shot_for();
/// Row groups of the fused kernel of FusedMode `mode` resident at once on the current device (the
/// least over its instantiations; at least 1): clusters of `cluster` CTAs of `threads` threads
/// (cluster modes), groups of `cluster` such CTAs (split, two-shot), CTAs of `threads` threads (block).
int fused_max_groups(int mode, int cluster, int threads);

}  // namespace specsim::car::detail
