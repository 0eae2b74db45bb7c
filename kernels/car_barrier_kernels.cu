// The barrier kernels of the custom all-reduce: one-shot pull, one-shot push and two-shot; bf16,
// fp16, fp32. The flag-free kernels: car_ll_one_shot.cu, car_ll_two_shot.cu, car_ll_bcast.cu; the
// launcher: car_launch.cu.
//
// Read top-down: reduction and copy helpers -> release/acquire flag helpers -> bounded barrier ->
// the three kernels -> their launch. Layout of the shared regions: car_layout.h; element types,
// bounded spins and determinism: car_device.cuh.
//
// Ordering. Each block b of rank r synchronizes only with block b of every peer: a barrier
// is "block b of every rank has finished the writes before it". A block writes its share of
// the data (staging, pushes, reduce-scatter), __syncthreads(), then thread t stores the call's
// epoch into rank t's flag slot [b][barrier][r] with st.release.sys (cumulative over the
// block's writes ordered by the __syncthreads) and spins on its own slot [b][barrier][t] with
// ld.acquire.sys until rank t's epoch arrives; a second __syncthreads() orders the other
// threads' reads of peer data after that acquire. Every block touches the same element indices
// in every phase (same grid-stride pattern), so a per-block barrier is enough.
//
// Epochs. Each rank keeps in its region the count of calls it has completed; a call's epoch is
// that count + 1 and the last block to finish stores it back (kernel boundaries order it for
// the next call). Flags are compared with >= (wrap-safe), never reset, so CUDA graphs replay
// with no host work. Data slots alternate by epoch parity: a peer can be at most one call ahead
// (it cannot pass barrier 0 of call e+1 before this rank arrives there), so the parity it
// writes is never the one this rank is still reading.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "car_device.cuh"
#include "car_kernels.h"
#include "car_layout.h"

namespace specsim::car::detail {
namespace {

// ---------------------------------------------------------------- reduction and copy helpers
/// Sum of v[0..world) element-wise in rank order, fp32 accumulation, rounded once.
template <typename T>
__device__ __forceinline__ uint4 reduce_pack(const uint4 (&v)[kMaxRanks], int world) {
  float acc[kPack<T>];
  const T* e0 = reinterpret_cast<const T*>(&v[0]);
#pragma unroll
  for (int k = 0; k < kPack<T>; ++k) acc[k] = to_float(e0[k]);
#pragma unroll
  for (int q = 1; q < kMaxRanks; ++q) {
    if (q < world) {
      const T* e = reinterpret_cast<const T*>(&v[q]);
#pragma unroll
      for (int k = 0; k < kPack<T>; ++k) acc[k] += to_float(e[k]);
    }
  }
  uint4 r;
  T* o = reinterpret_cast<T*>(&r);
#pragma unroll
  for (int k = 0; k < kPack<T>; ++k) o[k] = to_output<T>(acc[k]);
  return r;
}

/// Scalar version for the tail: element i of every rank's area, in rank order.
/// `src(q)` is the start of rank q's source area.
template <typename T, typename Src>
__device__ __forceinline__ T reduce_scalar(Src src, std::size_t i, int world) {
  float acc = to_float(reinterpret_cast<const T*>(src(0))[i]);
#pragma unroll
  for (int q = 1; q < kMaxRanks; ++q)
    if (q < world) acc += to_float(reinterpret_cast<const T*>(src(q))[i]);
  return to_output<T>(acc);
}

/// Reduces vectors [first, n) (+ `shift`) of every rank's area `src(q)` into dst, in rank
/// order. Peer pointers are recomputed from the kernel parameters (constant bank) rather
/// than held in registers, which go to the loads in flight.
template <typename T, typename Src>
__device__ __forceinline__ void reduce_vectors(uint4* dst, Src src, std::size_t shift, std::size_t n, std::size_t first,
                                               std::size_t stride, int world) {
  for (std::size_t i = first; i < n; i += stride) {
    uint4 v[kMaxRanks];
#pragma unroll
    for (int q = 0; q < kMaxRanks; ++q)
      if (q < world) v[q] = reinterpret_cast<const uint4*>(src(q))[shift + i];
    dst[i] = reduce_pack<T>(v, world);
  }
}

/// Copies vectors [first, n) with `stride`, four loads in flight per thread.
__device__ __forceinline__ void copy_vectors(uint4* dst, const uint4* src, std::size_t n, std::size_t first,
                                             std::size_t stride) {
  std::size_t i = first;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

/// For every chunk q: dst[cb[q] + j] = src(q)[cb[q] + j] for j in [first, len q) by `stride`,
/// all chunks' loads issued before their stores (world loads in flight, not one).
template <typename Src>
__device__ __forceinline__ void copy_chunks(uint4* dst, Src src, const std::uint32_t (&cb)[kMaxRanks + 1],
                                            std::size_t longest, std::size_t first, std::size_t stride, int world) {
  for (std::size_t j = first; j < longest; j += stride) {
    uint4 v[kMaxRanks];
#pragma unroll
    for (int q = 0; q < kMaxRanks; ++q)
      if (q < world && cb[q] + j < cb[q + 1]) v[q] = src(q)[cb[q] + j];
#pragma unroll
    for (int q = 0; q < kMaxRanks; ++q)
      if (q < world && cb[q] + j < cb[q + 1]) dst[cb[q] + j] = v[q];
  }
}

// ---------------------------------------------------------------- flag helpers
__device__ __forceinline__ void store_release_sys(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ std::uint32_t load_acquire_sys(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t* flag_slot(char* base, int block, int barrier, int src) {
  return reinterpret_cast<std::uint32_t*>(base + kFlagsOff) +
         (static_cast<std::size_t>(block) * kBarriers + barrier) * kMaxRanks + src;
}
__device__ __forceinline__ std::uint32_t* ctrl_words(const RankPtrs& me) {
  return reinterpret_cast<std::uint32_t*>(me.base[me.rank] + kCtrlOff);
}

// ---------------------------------------------------------------- barrier
/// Block-level barrier with every peer's block blockIdx.x (see the top of the file).
/// Returns false in every thread when some peer did not arrive within the timeout; the
/// error word then names the rank, the barrier and the epoch.
__device__ bool barrier(const LaunchArgs& a, const RankPtrs& me, int bar, std::uint32_t epoch) {
  __syncthreads();  // this block's data writes happen before the releases below
  bool late = false;
  const int t = static_cast<int>(threadIdx.x);
  if (t < a.world) {
    store_release_sys(flag_slot(me.base[t], blockIdx.x, bar, me.rank), epoch);
    const std::uint32_t* mine = flag_slot(me.base[me.rank], blockIdx.x, bar, t);
    SpinBound bound;
    while (static_cast<std::int32_t>(load_acquire_sys(mine) - epoch) < 0) {
      if (bound.expired(a.timeout_ns)) {
        late = true;
        record_wait_failure(me, t, bar, static_cast<int>(blockIdx.x), epoch);
        break;
      }
    }
  }
  // the acquire above happens before every thread's reads of peer data after this
  return __syncthreads_or(late) == 0;
}

/// The call's epoch: calls this rank completed + 1.
__device__ __forceinline__ std::uint32_t call_epoch(const RankPtrs& me) {
  return *reinterpret_cast<volatile std::uint32_t*>(ctrl_words(me)) + 1;
}

/// The last block of this rank to finish stores the epoch as "completed".
__device__ __forceinline__ void finish(const LaunchArgs& a, const RankPtrs& me, std::uint32_t epoch) {
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t* ctrl = ctrl_words(me);
    __threadfence();
    if (atomicAdd(&ctrl[1], 1u) == static_cast<std::uint32_t>(a.blocks - 1)) {
      reinterpret_cast<volatile std::uint32_t*>(ctrl)[1] = 0;
      reinterpret_cast<volatile std::uint32_t*>(ctrl)[0] = epoch;
    }
  }
}

/// Vector and tail split of a message: `nv` 16-byte vectors then `tail` single elements.
struct Split {
  std::size_t nv, tail, first, stride;
};
template <typename T>
__device__ __forceinline__ Split split(const LaunchArgs& a) {
  return {a.count / kPack<T>, a.count % kPack<T>, static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x,
          static_cast<std::size_t>(a.blocks) * kThreads};
}

// ---------------------------------------------------------------- kernels
/// One-shot pull: stage the input into this rank's slot, barrier, read every peer's slot.
template <typename T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) pull_kernel(const __grid_constant__ LaunchArgs a) {
  const RankPtrs& me = a.r[blockIdx.y];
  if (me.absent) return;
  const std::uint32_t epoch = call_epoch(me);
  const int par = static_cast<int>(epoch & 1);
  const Split s = split<T>(a);
  const std::size_t tail0 = s.nv * kPack<T>;
  const bool tail_thread = blockIdx.x == 0 && threadIdx.x < s.tail;

  char* mine = me.base[me.rank] + in_off(a.slot, par);
  copy_vectors(reinterpret_cast<uint4*>(mine), static_cast<const uint4*>(me.in), s.nv, s.first, s.stride);
  if (tail_thread) reinterpret_cast<T*>(mine)[tail0 + threadIdx.x] = static_cast<const T*>(me.in)[tail0 + threadIdx.x];

  if (barrier(a, me, 0, epoch)) {
    const std::size_t off = in_off(a.slot, par);
    const auto src = [&me, off](int q) { return me.base[q] + off; };
    reduce_vectors<T>(static_cast<uint4*>(me.out), src, 0, s.nv, s.first, s.stride, a.world);
    if (tail_thread) static_cast<T*>(me.out)[tail0 + threadIdx.x] = reduce_scalar<T>(src, tail0 + threadIdx.x, a.world);
  }
  finish(a, me, epoch);
}

/// One-shot push: write the input into slot [me] of every peer's receive area (posted
/// writes), barrier, reduce the local receive area.
template <typename T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) push_kernel(const __grid_constant__ LaunchArgs a) {
  const RankPtrs& me = a.r[blockIdx.y];
  if (me.absent) return;
  const std::uint32_t epoch = call_epoch(me);
  const int par = static_cast<int>(epoch & 1);
  const Split s = split<T>(a);
  const std::size_t tail0 = s.nv * kPack<T>;
  const bool tail_thread = blockIdx.x == 0 && threadIdx.x < s.tail;

  const std::size_t to_peers = recv_off(a.slot, a.world, par, me.rank);
  const uint4* in = static_cast<const uint4*>(me.in);
  for (std::size_t i = s.first; i < s.nv; i += s.stride) {
    const uint4 v = in[i];
#pragma unroll
    for (int q = 0; q < kMaxRanks; ++q)
      if (q < a.world) reinterpret_cast<uint4*>(me.base[q] + to_peers)[i] = v;
  }
  if (tail_thread) {
    const T x = static_cast<const T*>(me.in)[tail0 + threadIdx.x];
#pragma unroll
    for (int q = 0; q < kMaxRanks; ++q)
      if (q < a.world) reinterpret_cast<T*>(me.base[q] + to_peers)[tail0 + threadIdx.x] = x;
  }

  if (barrier(a, me, 0, epoch)) {
    // every source is in this rank's own region: slot q of the receive area
    const auto src = [&a, &me, par](int q) { return me.base[me.rank] + recv_off(a.slot, a.world, par, q); };
    reduce_vectors<T>(static_cast<uint4*>(me.out), src, 0, s.nv, s.first, s.stride, a.world);
    if (tail_thread) static_cast<T*>(me.out)[tail0 + threadIdx.x] = reduce_scalar<T>(src, tail0 + threadIdx.x, a.world);
  }
  finish(a, me, epoch);
}

/// Two-shot: stage, barrier, reduce chunk `rank` from every peer into tmp (reduce-scatter),
/// barrier, copy chunk q from rank q's tmp for every q (all-gather). Chunk q holds vectors
/// [q*nv/world, (q+1)*nv/world); the few tail elements are reduced one-shot by block 0.
template <typename T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) two_shot_kernel(const __grid_constant__ LaunchArgs a) {
  const RankPtrs& me = a.r[blockIdx.y];
  if (me.absent) return;
  const std::uint32_t epoch = call_epoch(me);
  const int par = static_cast<int>(epoch & 1);
  const Split s = split<T>(a);
  const std::size_t tail0 = s.nv * kPack<T>;
  const bool tail_thread = blockIdx.x == 0 && threadIdx.x < s.tail;
  const auto chunk_begin = [&](int q) { return s.nv * static_cast<std::size_t>(q) / a.world; };

  // chunk q = vectors [cb[q], cb[q+1]); sizes differ by at most one vector
  std::uint32_t cb[kMaxRanks + 1];
#pragma unroll
  for (int q = 0; q <= kMaxRanks; ++q)
    cb[q] = static_cast<std::uint32_t>(s.nv * static_cast<std::size_t>(q < a.world ? q : a.world) / a.world);
  const std::size_t longest = s.nv / a.world + 1;

  // stage: chunk by chunk, with the same index pattern the peers' reduce-scatter uses
  char* mine = me.base[me.rank] + in_off(a.slot, par);
  copy_chunks(
      reinterpret_cast<uint4*>(mine), [&me](int) { return static_cast<const uint4*>(me.in); }, cb, longest, s.first,
      s.stride, a.world);
  if (tail_thread) reinterpret_cast<T*>(mine)[tail0 + threadIdx.x] = static_cast<const T*>(me.in)[tail0 + threadIdx.x];

  bool ok = barrier(a, me, 0, epoch);
  if (ok) {
    const std::size_t off = in_off(a.slot, par);
    const auto src = [&me, off](int q) { return me.base[q] + off; };
    const std::size_t b = chunk_begin(me.rank), n = chunk_begin(me.rank + 1) - b;  // = cb[rank]
    uint4* tmp = reinterpret_cast<uint4*>(me.base[me.rank] + tmp_off(a.slot)) + b;
    reduce_vectors<T>(tmp, src, b, n, s.first, s.stride, a.world);
    if (tail_thread) static_cast<T*>(me.out)[tail0 + threadIdx.x] = reduce_scalar<T>(src, tail0 + threadIdx.x, a.world);
    ok = barrier(a, me, 1, epoch);
  }
  if (ok) {
    const std::size_t off = tmp_off(a.slot);
    copy_chunks(
        static_cast<uint4*>(me.out), [&me, off](int q) { return reinterpret_cast<const uint4*>(me.base[q] + off); }, cb,
        longest, s.first, s.stride, a.world);
  }
  finish(a, me, epoch);
}

}  // namespace

template <typename T>
cudaError_t launch_barrier(const LaunchArgs& a, Variant v, dim3 grid, cudaStream_t stream) {
  switch (v) {
    case Variant::OneShotPull: pull_kernel<T><<<grid, kThreads, 0, stream>>>(a); break;
    case Variant::OneShotPush: push_kernel<T><<<grid, kThreads, 0, stream>>>(a); break;
    case Variant::TwoShot: two_shot_kernel<T><<<grid, kThreads, 0, stream>>>(a); break;
    default:  // not a barrier variant: refuse, never skip
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
int barrier_occupancy() {
  int best = 1 << 30, n = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, pull_kernel<T>, kThreads, 0);
  best = std::min(best, n);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, push_kernel<T>, kThreads, 0);
  best = std::min(best, n);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, two_shot_kernel<T>, kThreads, 0);
  best = std::min(best, n);
  return best;
}

template cudaError_t launch_barrier<__nv_bfloat16>(const LaunchArgs&, Variant, dim3, cudaStream_t);
template cudaError_t launch_barrier<__half>(const LaunchArgs&, Variant, dim3, cudaStream_t);
template cudaError_t launch_barrier<float>(const LaunchArgs&, Variant, dim3, cudaStream_t);
template int barrier_occupancy<__nv_bfloat16>();
template int barrier_occupancy<__half>();
template int barrier_occupancy<float>();

}  // namespace specsim::car::detail
