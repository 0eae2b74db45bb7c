#pragma once
// Device helpers every custom all-reduce kernel uses: element types and the rounding of a sum,
// the bounded spin and the error word. Included only by the kernel files (car_barrier_kernels.cu,
// car_ll_one_shot.cu, car_ll_two_shot.cu, car_ll_bcast.cu). Each of them is compiled whole (no
// relocatable device code), so the helpers stay internal to each file, as when all kernels were one.
//
// Bounded spins. A spin that outlasts timeout_ns records (rank, missing peer, barrier, block,
// epoch) in the rank's host-mapped error word and the block skips the rest of the call; the
// host turns the word into an exception (Communicator::check).
//
// Determinism. Every output element is the fp32 sum in rank order 0, 1, ..., world-1, rounded
// once to the element type, whichever rank computes it: all ranks and all variants agree
// bitwise. A NaN sum is written as the canonical NaN of the type (0x7fff, 0x7fffffff), whatever
// the input NaNs' bits, so NaN inputs agree bitwise too.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "car_layout.h"

namespace specsim::car::detail {
namespace {

/// Two blocks of kThreads per SM (64 registers a thread): with 8 virtual ranks on one GPU,
/// 2 x 132 resident blocks give each rank 33 blocks, all co-resident as the barriers need.
constexpr int kMinBlocksPerSm = 2;

// ---------------------------------------------------------------- type helpers
__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}

/// The canonical NaN of each type.
template <typename T>
__device__ __forceinline__ T canonical_nan();
template <>
__device__ __forceinline__ float canonical_nan<float>() {
  return __int_as_float(0x7fffffff);
}
template <>
__device__ __forceinline__ __nv_bfloat16 canonical_nan<__nv_bfloat16>() {
  return __ushort_as_bfloat16(0x7fff);
}
template <>
__device__ __forceinline__ __half canonical_nan<__half>() {
  return __ushort_as_half(0x7fff);
}

/// The sum rounded to T; a NaN sum becomes T's canonical NaN, whatever the input NaNs were.
template <typename T>
__device__ __forceinline__ T to_output(float acc) {
  return acc != acc ? canonical_nan<T>() : from_float<T>(acc);
}

/// Elements per 16-byte vector.
template <typename T>
inline constexpr int kPack = 16 / sizeof(T);

// ---------------------------------------------------------------- bounded spins
__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
/// Bound of a spin. The loop polls; only every kTimerEvery failed polls does it read %globaltimer
/// (an off-SM read), so the polling loop holds nothing but the loads and their checks. The bound
/// is timeout_ns plus at most 2 x kTimerEvery polls.
constexpr unsigned kTimerEvery = 256;
struct SpinBound {
  std::uint64_t start = 0;
  unsigned spins = 0;
  /// Counts one failed poll; true once the spin has outlasted `timeout_ns`.
  __device__ __forceinline__ bool expired(std::uint64_t timeout_ns) {
    if (++spins % kTimerEvery != 0) return false;
    const std::uint64_t now = global_timer_ns();
    if (start == 0) {
      start = now;
      return false;
    }
    return now - start > timeout_ns;
  }
};

/// A spin gave up: records the first failure in the rank's error word (peer or barrier that never
/// came, block, call) and makes it visible to the host, which reports it by rank; later failures
/// leave the one already recorded.
__device__ __forceinline__ void record_wait_failure(const RankPtrs& me, int missing, int what, int block,
                                                    std::uint32_t epoch) {
  volatile unsigned long long* err = me.err;
  if (*err == 0) {
    *err = encode_error(me.rank, missing, what, block, epoch);
    __threadfence_system();
  }
}

}  // namespace
}  // namespace specsim::car::detail
