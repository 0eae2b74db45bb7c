#pragma once
// Device helpers of the flag-free kernels (one-shot-ll and one-shot-ll-pull: car_ll_one_shot.cu;
// two-shot-ll: car_ll_two_shot.cu; one-shot-ll-bcast: car_ll_bcast.cu): the reserved empty value
// and the packet checks, a message's input and output vectors (the last one partial), the
// reduction on register vectors, the call count, programmatic dependent launch. The packets'
// protocol (readiness travels with the data): car_ll_one_shot.cu. Internal to those files, as
// car_device.cuh.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "car_device.cuh"
#include "car_layout.h"
#include "sys_scope_ptx.cuh"

namespace specsim::car::detail {
namespace {

// load_relaxed_sys / store_relaxed_sys (the sends and polls): sys_scope_ptx.cuh.

/// The reserved (empty) value in every element.
__device__ __forceinline__ uint4 empty_vec() { return make_uint4(~0u, ~0u, ~0u, ~0u); }

/// True when no element of `v` holds the reserved value.
template <typename T>
__device__ __forceinline__ bool filled(uint4 v) {
  if constexpr (sizeof(T) == 4) {
    return v.x != 0xffffffffu && v.y != 0xffffffffu && v.z != 0xffffffffu && v.w != 0xffffffffu;
  } else {  // __vcmpeq2: 0xffff in each 16-bit half that equals
    return (__vcmpeq2(v.x, 0xffffffffu) | __vcmpeq2(v.y, 0xffffffffu) | __vcmpeq2(v.z, 0xffffffffu) |
            __vcmpeq2(v.w, 0xffffffffu)) == 0;
  }
}

/// Replaces the reserved value by the canonical NaN (sign bit cleared): still a NaN, so the sum
/// is unchanged (to_output).
template <typename T>
__device__ __forceinline__ std::uint32_t unreserve_word(std::uint32_t w) {
  if constexpr (sizeof(T) == 4)
    return w == 0xffffffffu ? 0x7fffffffu : w;
  else
    return w & ~(__vcmpeq2(w, 0xffffffffu) & 0x80008000u);
}
template <typename T>
__device__ __forceinline__ uint4 unreserve(uint4 v) {
  return {unreserve_word<T>(v.x), unreserve_word<T>(v.y), unreserve_word<T>(v.z), unreserve_word<T>(v.w)};
}

/// Vector i of the input; the last, partial vector is padded with zeros (never the reserved value).
template <typename T>
__device__ __forceinline__ uint4 load_input(const void* in, std::size_t i, std::size_t count) {
  const std::size_t e0 = i * kPack<T>;
  if (e0 + kPack<T> <= count) return static_cast<const uint4*>(in)[i];
  uint4 v = {0, 0, 0, 0};
  T* e = reinterpret_cast<T*>(&v);
#pragma unroll
  for (int k = 0; k < kPack<T>; ++k)
    if (e0 + k < count) e[k] = static_cast<const T*>(in)[e0 + k];
  return v;
}

/// Writes vector i of the output (only the elements below `count`).
template <typename T>
__device__ __forceinline__ void store_output(void* out, std::size_t i, std::size_t count, uint4 v) {
  const std::size_t e0 = i * kPack<T>;
  if (e0 + kPack<T> <= count) {
    static_cast<uint4*>(out)[i] = v;
    return;
  }
  const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
  for (int k = 0; k < kPack<T>; ++k)
    if (e0 + k < count) static_cast<T*>(out)[e0 + k] = e[k];
}

/// 32-bit word j of a vector (j a compile-time constant after unrolling).
__device__ __forceinline__ std::uint32_t word(const uint4& v, int j) {
  return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}
/// Element h (0 low, 1 high) of a 32-bit word as float, by bit operations (taking the address of
/// a register vector's halves would move it to local memory).
template <typename T>
__device__ __forceinline__ float lane(std::uint32_t w, int h);
template <>
__device__ __forceinline__ float lane<float>(std::uint32_t w, int) {
  return __uint_as_float(w);
}
template <>
__device__ __forceinline__ float lane<__nv_bfloat16>(std::uint32_t w, int h) {
  return __uint_as_float(h ? (w & 0xffff0000u) : (w << 16));
}
template <>
__device__ __forceinline__ float lane<__half>(std::uint32_t w, int h) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(h ? w >> 16 : w & 0xffffu)));
}
template <typename T>
__device__ __forceinline__ std::uint32_t bits_of(T x);
template <>
__device__ __forceinline__ std::uint32_t bits_of<float>(float x) {
  return __float_as_uint(x);
}
template <>
__device__ __forceinline__ std::uint32_t bits_of<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat16_as_ushort(x);
}
template <>
__device__ __forceinline__ std::uint32_t bits_of<__half>(__half x) {
  return __half_as_ushort(x);
}

/// reduce_pack on register vectors: the same sums in the same order, by bit operations; rank
/// `self`'s vector is `own` (selected per use: an assignment v[self] = own would index the array
/// at run time and move it to local memory).
template <typename T, int kR>
__device__ __forceinline__ uint4 reduce_regs(const uint4 (&v)[kR], const uint4& own, int self, int world) {
  constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));
  std::uint32_t out[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    out[j] = 0;
#pragma unroll
    for (int h = 0; h < kPerWord; ++h) {
      const std::uint32_t mine = word(own, j);
      float acc = lane<T>(self == 0 ? mine : word(v[0], j), h);
#pragma unroll
      for (int q = 1; q < kR; ++q)
        if (q < world) acc += lane<T>(self == q ? mine : word(v[q], j), h);
      out[j] |= bits_of<T>(to_output<T>(acc)) << (16 * h);
    }
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

/// Polls `src(q)` of every peer q != self below world, all pending loads in flight at once, then
/// the checks, until every one is filled (v[q]: peer q's vector; v[self] is not written). False
/// when the block's give-up flag `failed` is set, or when `bound_ns` passes: then the wait is
/// recorded against the first missing peer and the flag set.
template <typename T, int kR, typename Src>
__device__ __forceinline__ bool poll_peers(uint4 (&v)[kR], Src src, int world, const RankPtrs& me, int* failed,
                                           std::uint64_t bound_ns, int blk, std::uint32_t call) {
  unsigned pending = 0;
#pragma unroll
  for (int q = 0; q < kR; ++q)
    if (q < world && q != me.rank) pending |= 1u << q;
  SpinBound bound;
  while (true) {
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if (pending & (1u << q)) v[q] = load_relaxed_sys(src(q));
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if ((pending & (1u << q)) && filled<T>(v[q])) pending &= ~(1u << q);
    if (pending == 0) return true;
    if (atomicOr(failed, 0) != 0) return false;
    if (bound.expired(bound_ns)) {
      record_wait_failure(me, __ffs(static_cast<int>(pending)) - 1, kLlWait, blk, call);
      atomicExch(failed, 1);
      return false;
    }
  }
}

/// Polls `p` until filled (into `v`); false when the block's give-up flag `failed` is set, or when
/// `bound_ns` passes: then the wait is recorded against rank `from` (as `what`: kLlWait, or
/// kOwnerWait for a slice owner's reduced values) and the flag set.
template <typename T>
__device__ __forceinline__ bool poll_filled(const uint4* p, uint4& v, int from, const RankPtrs& me, int* failed,
                                            std::uint64_t bound_ns, int blk, std::uint32_t call, int what = kLlWait) {
  SpinBound bound;
  while (true) {
    v = load_relaxed_sys(p);
    if (filled<T>(v)) return true;
    if (atomicOr(failed, 0) != 0) return false;
    if (bound.expired(bound_ns)) {
      record_wait_failure(me, from, what, blk, call);
      atomicExch(failed, 1);
      return false;
    }
  }
}

/// Stores a rank's new call count into calls[j] for every j = blk (mod nblk) below kMaxBlocks,
/// so that every entry is current whatever the next call's block count; `lanes` threads share
/// the stores, this one being `lane` (threadIdx.x, blockDim.x: the whole block; 0, 1: one thread).
/// The whole block where it measured faster: thread 0 alone storing the 64 entries of a one-block
/// call measured ~1.7 us slower at 1-2 KB on 2 H200s (traces/experiments/README.md). Call it only after every
/// thread of the block has read the count (a block barrier in between).
__device__ __forceinline__ void store_call_count(std::uint32_t* calls, unsigned blk, unsigned nblk, std::uint32_t call,
                                                 unsigned lane, unsigned lanes) {
  for (unsigned j = blk + lane * nblk; j < static_cast<unsigned>(kMaxBlocks); j += lanes * nblk) calls[j] = call;
}

/// Programmatic dependent launch (sm_90): wait until the kernels before this one in the stream
/// completed and their writes are visible; a no-op when launched without the attribute.
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
/// Lets the next kernel in the stream launch (it runs up to its own grid_dependency_wait).
__device__ __forceinline__ void trigger_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

}  // namespace
}  // namespace specsim::car::detail
