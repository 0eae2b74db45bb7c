// Launcher of the custom all-reduce kernels: checks the launch shape, picks the kernel for
// (variant, element type, world) and launches it on grid (blocks, ranks); the flag-free kernels
// with programmatic dependent launch. The kernels: car_barrier_kernels.cu (one-shot pull, one-shot
// push, two-shot), car_ll_one_shot.cu (one-shot-ll, one-shot-ll-pull), car_ll_two_shot.cu
// (two-shot-ll), car_ll_bcast.cu (one-shot-ll-bcast); how a file hands them out: car_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "car_kernels.h"
#include "car_layout.h"

namespace specsim::car::detail {
namespace {

/// Launches a flag-free kernel, with programmatic dependent launch.
/// `world2`: the kernel is the 2-rank instantiation (kWorld = 2).
cudaError_t launch_flag_free(Kernel kernel, bool world2, dim3 grid, const LaunchArgs& a, cudaStream_t stream) {
  // Several ranks in one launch (virtual ranks) on the any-world kernel: grid (ranks, blocks), so
  // that block b of every rank is dispatched together and the blocks that wait for each other start
  // together (8 virtual ranks, 42 KB: 0.1 us faster than (blocks, ranks)).
  LaunchArgs p = a;
  p.rank_fastest = a.ranks > 1 && !world2 ? 1 : 0;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = p.rank_fastest ? dim3(grid.y, grid.x) : grid;
  cfg.blockDim = dim3(static_cast<unsigned>(a.threads));
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, p);
}

template <typename T>
cudaError_t launch_typed(const LaunchArgs& a, Variant v, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(a.blocks), static_cast<unsigned>(a.ranks));
  const bool ff = car_policy::is_flag_free(v);
  // the barrier kernels assume kThreads threads; the flag-free one takes 32..kLlMaxThreads
  if (ff ? (a.threads < 32 || a.threads > kLlMaxThreads || a.threads % 32 != 0) : a.threads != kThreads)
    return cudaErrorInvalidConfiguration;
  const int fixed = a.world == 2 ? 2 : 0;  // the 2-rank flag-free kernels (kWorld = 2)
  switch (v) {
    case Variant::OneShotPull:
    case Variant::OneShotPush:
    case Variant::TwoShot: return launch_barrier<T>(a, v, grid, stream);
    case Variant::OneShotLL: return launch_flag_free(flag_free_for<T, false>(fixed), fixed == 2, grid, a, stream);
    case Variant::OneShotLLPull: return launch_flag_free(flag_free_for<T, true>(fixed), fixed == 2, grid, a, stream);
    case Variant::TwoShotLL: return launch_flag_free(two_shot_ll_for<T>(), false, grid, a, stream);
    case Variant::OneShotLLBcast: return launch_flag_free(bcast_for<T>(fixed), fixed == 2, grid, a, stream);
    default:  // Auto must be resolved by the caller: refuse, never skip
      return cudaErrorInvalidValue;
  }
}

template <typename T>
int occupancy_typed() {
  int best = barrier_occupancy<T>(), n = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, two_shot_ll_for<T>(), kLlMaxThreads, 0);
  best = std::min(best, n);
  for (int world : {0, 2}) {  // the any-world and the 2-rank instantiations
    for (Kernel k : {flag_free_for<T, false>(world), flag_free_for<T, true>(world), bcast_for<T>(world)}) {
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kLlMaxThreads, 0);
      best = std::min(best, n);
    }
  }
  return best;
}

}  // namespace

cudaError_t launch(const LaunchArgs& args, Variant variant, DType dtype, cudaStream_t stream) {
  if (args.blocks < 1 || args.blocks > kMaxBlocks || args.ranks < 1 || args.ranks > kMaxRanks)
    return cudaErrorInvalidConfiguration;
  switch (dtype) {
    case DType::BF16: return launch_typed<__nv_bfloat16>(args, variant, stream);
    case DType::FP16: return launch_typed<__half>(args, variant, stream);
    case DType::FP32: return launch_typed<float>(args, variant, stream);
    case DType::FP8: break;  // no fp8 kernels: refused on the host (refuse_reason) before this
    default: break;          // a value outside the enum
  }
  return cudaErrorInvalidValue;
}

int max_blocks_per_sm() {
  return std::max(1, std::min({occupancy_typed<__nv_bfloat16>(), occupancy_typed<__half>(), occupancy_typed<float>()}));
}

}  // namespace specsim::car::detail
