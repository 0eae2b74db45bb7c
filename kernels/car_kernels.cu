// Custom all-reduce kernels: one-shot pull, one-shot push, two-shot, the flag-free one-shots
// (one-shot-ll, one-shot-ll-pull, one-shot-ll-bcast) and the flag-free two-shot (two-shot-ll);
// bf16, fp16, fp32.
//
// Read top-down: type helpers -> release/acquire flag helpers -> bounded barrier -> the three
// barrier kernels -> the flag-free kernel -> the flag-free two-shot -> the flag-free one-shot with
// one copy per owner (bcast) -> the launcher. Layout of
// the shared regions: car_layout.h.
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

#include <algorithm>

#include "car_layout.h"
#include "sys_scope_ptx.cuh"

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

// ---------------------------------------------------------------- flag-free one-shot
// one-shot-ll (push): every rank writes its input into slot [parity][me] of every peer's
// flag-free area, then waits in its own area until slot [parity][q] of every peer q is filled,
// reduces, and empties the slots it read. one-shot-ll-pull: every rank writes its input into
// slot [parity][q] of its own area, one copy per reader q, and each reader polls, reduces and
// empties its copy in the owner's area. No barrier before or after a call.
//
// Readiness travels with the data. An empty slot holds the reserved value in every element
// (all bits set: a NaN that no arithmetic produces); a sender replaces that value in its input
// by the canonical NaN (the output is the canonical NaN either way, see to_output), so a filled
// element can never look empty. Sends are st.relaxed.sys and polls ld.relaxed.sys (16-byte
// vectors of 32-bit words): system scope, so that a store into another GPU's memory, over NVLink
// or PCIe, is made visible there and not held at this GPU, and a poll is never served from a
// stale L1 line (on an H200 a relaxed.sys load costs what a relaxed.gpu or an L2 load costs:
// specsim-arbench's floors). Each 32-bit word is single-copy atomic and the reader checks every
// element, so a vector seen half-written reads as not yet filled. No fence is needed: the payload
// is the flag. Emptying stores, outputs and the call count are plain stores: they need only be
// performed before this kernel completes (kernel completion orders them before the next call).
//
// Rotation. Slots alternate by the parity of the call count. A rank finishes call e only after
// every peer wrote its data of call e, that is after every peer finished call e-1 (stream order:
// a kernel touches memory only after the previous one completed; with programmatic dependent
// launch it may start earlier but waits at griddepcontrol.wait), including the emptying of the
// slots it read in call e-1. So when a rank writes parity p again (call e+1 after e-1), the
// reader of that slot has emptied it, and no sender can overwrite data a slower rank has not
// consumed.
//
// Call count. Block b of a rank reads ll_calls[b] at its start and stores the new count into
// ll_calls[j] for every j = b (mod blocks) at its end, so every entry is current whatever the
// next call's block count; kernel boundaries order these stores before the next call's loads.
// Ranks count the same calls, so they agree on the parity.

// load_relaxed_sys / store_relaxed_sys: sys_scope_ptx.cuh (see above for the ordering).

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

/// Stores a rank's new call count into calls[j] for every j = blk (mod nblk) below kMaxBlocks,
/// so that every entry is current whatever the next call's block count; `lanes` threads share
/// the stores, this one being `lane` (threadIdx.x, blockDim.x: the whole block; 0, 1: one thread).
/// The whole block where it measured faster: thread 0 alone storing the 64 entries of a one-block
/// call measured ~1.7 us slower at 1-2 KB on 2 H200s (kernels/README.md). Call it only after every
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

/// Flag-free one-shot; kPull selects one-shot-ll-pull. See the top of this section.
/// At most kLlMaxThreads threads a block, so that the 8 peer vectors in flight stay in registers
/// (128 a thread); kMinBlocksPerSm blocks per SM, as the barrier kernels, keep the co-residency cap.
/// kWorld: the world size when fixed at compile time (2), else 0 (any world, read from `a`). A
/// fixed world unrolls every per-peer loop to its real length, so a 2-rank call runs a fraction
/// of the 8-rank code.
template <typename T, bool kPull, int kWorld>
__global__ void __launch_bounds__(kLlMaxThreads, kMinBlocksPerSm)
    flag_free_kernel(const __grid_constant__ LaunchArgs a) {
  constexpr int kR = kWorld != 0 ? kWorld : kMaxRanks;  // per-peer loops' length
  const int world = kWorld != 0 ? kWorld : a.world;
  // grid (blocks, ranks), or (ranks, blocks) with LaunchArgs::rank_fastest (see launch_flag_free;
  // never for the 2-rank kernel, whose code stays that of one rank per launch)
  const bool rank_fastest = kWorld != 2 && a.rank_fastest != 0;
  const unsigned blk = rank_fastest ? blockIdx.y : blockIdx.x;
  const unsigned nblk = rank_fastest ? gridDim.y : gridDim.x;
  const RankPtrs& me = a.r[rank_fastest ? blockIdx.x : blockIdx.y];
  if (me.absent) return;
  __shared__ int s_failed;  // a thread of this block gave up waiting
  const std::size_t nvec = (a.count + kPack<T> - 1) / kPack<T>;
  const std::size_t first = static_cast<std::size_t>(blk) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(nblk) * blockDim.x;
  // Programmatic dependent launch: everything above reads only kernel parameters; the earlier
  // kernels' writes (the input, the call count, the emptied slots) are visible after the wait.
  // Then the next kernel in the stream may launch and run up to its own wait.
  grid_dependency_wait();
  trigger_dependents();
  // Every load of the prologue is issued before any result is used (warps issue in order: a use
  // stalls every later instruction), so the input's and the call count's latencies overlap.
  const uint4 first_raw = first < nvec ? load_input<T>(me.in, first, a.count) : uint4{};
  std::uint32_t* calls = reinterpret_cast<std::uint32_t*>(me.base[me.rank] + kLlCallsOff);
  // Every thread reads the count itself (one broadcast load a warp, written by this rank's
  // previous call: kernel order), so the sends wait for no block barrier; the barrier comes
  // after them (below), before the polls that read s_failed and before the block stores the
  // new count at the end.
  const std::uint32_t call = calls[blk] + 1;
  if (threadIdx.x == 0) s_failed = 0;
  const int par = static_cast<int>(call & 1);
  const uint4 first_in = unreserve<T>(first_raw);
  // slot [par][idx] of a region = its base + area + idx * ll_slot (ll_off, computed once)
  const std::size_t area = ll_off(a.slot, a.ll_slot, world, par, 0);
  char* const own_area = me.base[me.rank] + area;
  const std::size_t my_off = a.ll_slot * static_cast<std::size_t>(me.rank);
  // slot written by this rank for reader q; slot this rank reads from sender q
  const auto out_slot = [&](int q) {
    return reinterpret_cast<uint4*>(kPull ? own_area + a.ll_slot * static_cast<std::size_t>(q)
                                          : me.base[q] + area + my_off);
  };
  const auto in_slot = [&](int q) {
    return reinterpret_cast<uint4*>(kPull ? me.base[q] + area + my_off
                                          : own_area + a.ll_slot * static_cast<std::size_t>(q));
  };
  const auto input = [&](std::size_t i) {
    return i == first ? first_in : unreserve<T>(load_input<T>(me.in, i, a.count));
  };

  // send: posted stores, no waiting, to peers rank+1, rank+2, ... (mod world): every rank starts
  // with a different peer, so no area takes every rank's first stores at once (8 virtual ranks,
  // 42 KB: 0.5 us faster than 0, 1, ..., world-1; kernels/README.md). 2 ranks: the one peer.
  for (std::size_t i = first; i < nvec; i += stride) {
    const uint4 v = input(i);
    constexpr bool in_order = kWorld == 2;
    if (in_order) {
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if (q < world && q != me.rank) store_relaxed_sys(out_slot(q) + i, v);
    } else {
#pragma unroll
      for (int k = 1; k < kR; ++k)
        if (k < world) {
          const int q = me.rank + k < world ? me.rank + k : me.rank + k - world;
          store_relaxed_sys(out_slot(q) + i, v);
        }
    }
  }

  // s_failed initialised and every thread's count load completed (its sends used it)
  __syncthreads();
  // receive: poll every peer's vector until filled (bounded), reduce in rank order, empty the slots
  for (std::size_t i = first; i < nvec; i += stride) {
    const uint4 own = input(i);  // issued before the polls, so its latency hides behind them
    uint4 v[kR];
    unsigned pending = 0;
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if (q < world && q != me.rank) pending |= 1u << q;
    SpinBound bound;
    while (true) {
      // all pending peers' loads in flight at once, then the checks
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if (pending & (1u << q)) v[q] = load_relaxed_sys(in_slot(q) + i);
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if ((pending & (1u << q)) && filled<T>(v[q])) pending &= ~(1u << q);
      // s_failed (another thread of the block gave up) through shared-memory atomics, read after
      // every failed pass: reading it only every kTimerEvery passes measured slower (8 virtual ranks,
      // 42 KB: 4.08 against 3.66 us; 2 GPUs 0.1 us slower at 42-114 KB)
      if (pending == 0 || atomicOr(&s_failed, 0) != 0) break;
      if (bound.expired(a.timeout_ns)) {
        record_wait_failure(me, __ffs(static_cast<int>(pending)) - 1, kLlWait, static_cast<int>(blk), call);
        atomicExch(&s_failed, 1);
        break;
      }
    }
    if (pending != 0) break;  // gave up: the error word says why; the output is not written
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if (q < world && q != me.rank) in_slot(q)[i] = empty_vec();
    store_output<T>(me.out, i, a.count, reduce_regs<T, kR>(v, own, me.rank, world));
  }
  store_call_count(calls, blk, nblk, call, threadIdx.x, blockDim.x);
}

// ---------------------------------------------------------------- flag-free two-shot
// two-shot-ll: the flag-free packets of one-shot-ll (above), in two rounds. The message's nvec
// vectors are cut into world slices of `slice` = ceil(nvec / world) vectors; rank q owns slice q
// (the last slices may be shorter or empty).
//   1. reduce-scatter: every rank writes vector i of its input (reserved value replaced) into the
//      owner o of i: region o, slot [parity][me], position i (o == me: nothing sent).
//   2. each rank polls its own slice in slots [parity][q] of its own region for every peer q,
//      reduces in rank order 0..world-1 (its own input in its place: every owner sums the same
//      terms in the same order as the CPU reference and as one-shot-ll, so all ranks and variants
//      agree bitwise), writes the sum to its output, empties the slots it read, and writes the sum
//      into every peer p: region p, slot [parity][p] (the slot a region's owner never fills in
//      round 1), at the slice's own positions.
//   3. each rank polls slot [parity][me] of its own region at every position outside its slice,
//      copies what arrives to its output and empties the slot.
// A sum is never the reserved value (to_output writes a NaN sum as the canonical NaN), so the
// round-2 packets carry their own readiness too; padding of a partial last vector is zeros.
//
// Ordering, at each access: round-1 and round-2 sends are st.relaxed.sys (made visible at the
// peer over NVLink or PCIe, never held here), polls are ld.relaxed.sys (never served from a stale
// L1 line), 32-bit words single-copy atomic and every element checked, so a half-written vector
// reads as not filled; the payload is the flag, so no fence and no release/acquire pair is needed
// (a reader uses only the words it polled). A round-2 send carries values computed from round-1
// polls (a data dependence: it cannot be performed before them). Emptying stores, outputs and the
// call count are plain stores, ordered before the next call by kernel completion.
//
// Rotation: as one-shot-ll's, same slots, same parity and call count, so the variants mix freely
// across calls (every slot written in a call is read and emptied by its reader in that call). A
// rank finishes call e only after every peer's round-2 data of call e arrived, which its owner
// sent after every rank's round-1 data of call e arrived: so every rank had started call e, hence
// finished call e-1 and emptied its parity-(e-1) slots, before any rank writes that parity again
// in call e+1.
//
// Deadlock freedom: a thread does round 1 (no waiting), then round 2 for its slice positions, then
// round 3; round-1 sends never wait and round-2 sends wait only on round-1 data, so every wait is
// on work that does not wait on it (all blocks are co-resident: ll_block_cap).

/// Flag-free two-shot; see above. Same grid, threads and co-residency rules as flag_free_kernel.
template <typename T>
__global__ void __launch_bounds__(kLlMaxThreads, kMinBlocksPerSm)
    two_shot_ll_kernel(const __grid_constant__ LaunchArgs a) {
  constexpr int kR = kMaxRanks;  // per-peer loops' length
  const int world = a.world;
  const bool rank_fastest = a.rank_fastest != 0;
  const unsigned blk = rank_fastest ? blockIdx.y : blockIdx.x;
  const unsigned nblk = rank_fastest ? gridDim.y : gridDim.x;
  const RankPtrs& me = a.r[rank_fastest ? blockIdx.x : blockIdx.y];
  if (me.absent) return;
  __shared__ std::uint32_t s_done;  // calls this rank completed
  __shared__ int s_failed;          // a thread of this block gave up waiting
  // at most kLlMaxBytes / 16 vectors: 32-bit indices
  const auto nvec = static_cast<std::uint32_t>((a.count + kPack<T> - 1) / kPack<T>);
  const auto slice = (nvec + static_cast<std::uint32_t>(world) - 1) / static_cast<std::uint32_t>(world);
  const std::uint32_t first = blk * blockDim.x + threadIdx.x;
  const std::uint32_t stride = nblk * blockDim.x;
  // round 2's thread order: whole warps dealt round the blocks (warp w of block b is warp
  // w * blocks + b), so that a slice smaller than the grid keeps every block's first warps busy
  // rather than the first blocks' every warp; lanes stay on consecutive vectors
  const std::uint32_t first2 = ((threadIdx.x / 32) * nblk + blk) * 32 + threadIdx.x % 32;
  const std::uint32_t lo = min(nvec, slice * static_cast<std::uint32_t>(me.rank));
  const std::uint32_t hi = min(nvec, lo + slice);
  // as flag_free_kernel: parameters only above; the earlier kernels' writes are visible after this
  grid_dependency_wait();
  trigger_dependents();
  std::uint32_t* calls = reinterpret_cast<std::uint32_t*>(me.base[me.rank] + kLlCallsOff);
  if (threadIdx.x == 0) {
    s_done = calls[blk];  // written by this rank's previous flag-free call (kernel order)
    s_failed = 0;
  }
  __syncthreads();
  const std::uint32_t call = s_done + 1;
  const int par = static_cast<int>(call & 1);
  const std::size_t area = ll_off(a.slot, a.ll_slot, world, par, 0);
  // slot [par][idx] of rank q's region
  const auto slot = [&](int q, int idx) {
    return reinterpret_cast<uint4*>(me.base[q] + area + a.ll_slot * static_cast<std::size_t>(idx));
  };
  /// Round 3: polls `p` until filled; false once this thread or another of the block gave up.
  /// `from`: the slice's owner (named in the error word). Bounded by twice timeout_ns: an owner
  /// that waits for a missing rank in round 2 sends nothing, so the round-2 waiters, which see the
  /// missing rank directly, give up first and the error word names it, not the owner.
  const auto wait_filled = [&](const uint4* p, int from, uint4& v) {
    SpinBound bound;
    while (true) {
      v = load_relaxed_sys(p);  // relaxed.sys poll: see above
      if (filled<T>(v)) return true;
      if (atomicOr(&s_failed, 0) != 0) return false;
      if (bound.expired(2 * a.timeout_ns)) {
        record_wait_failure(me, from, kLlWait, static_cast<int>(blk), call);
        atomicExch(&s_failed, 1);
        return false;
      }
    }
  };
  bool ok = true;

  // 1. reduce-scatter sends: posted stores, no waiting
  for (std::uint32_t i = first; i < nvec; i += stride) {
    const int o = static_cast<int>(i / slice);
    if (o != me.rank) store_relaxed_sys(slot(o, me.rank) + i, unreserve<T>(load_input<T>(me.in, i, a.count)));
  }

  // 2. this rank's slice: every peer's packet, reduced in rank order, then sent to every peer
  for (std::uint32_t j = lo + first2; ok && j < hi; j += stride) {
    const uint4 own = unreserve<T>(load_input<T>(me.in, j, a.count));  // issued before the polls
    uint4 v[kR];
    unsigned pending = 0;
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if (q < world && q != me.rank) pending |= 1u << q;
    SpinBound bound;
    while (true) {
      // all pending peers' loads in flight at once, then the checks
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if (pending & (1u << q)) v[q] = load_relaxed_sys(slot(me.rank, q) + j);
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if ((pending & (1u << q)) && filled<T>(v[q])) pending &= ~(1u << q);
      if (pending == 0 || atomicOr(&s_failed, 0) != 0) break;
      if (bound.expired(a.timeout_ns)) {
        record_wait_failure(me, __ffs(static_cast<int>(pending)) - 1, kLlWait, static_cast<int>(blk), call);
        atomicExch(&s_failed, 1);
        break;
      }
    }
    if (pending != 0) {  // gave up: the error word says why; nothing more is written
      ok = false;
      break;
    }
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if (q < world && q != me.rank) slot(me.rank, q)[j] = empty_vec();  // plain: kernel order
    const uint4 sum = reduce_regs<T, kR>(v, own, me.rank, world);
    store_output<T>(me.out, j, a.count, sum);
    // all-gather sends to rank+1, rank+2, ... (mod world), as one-shot-ll's rotated sends
#pragma unroll
    for (int k = 1; k < kR; ++k)
      if (k < world) {
        const int p = me.rank + k < world ? me.rank + k : me.rank + k - world;
        store_relaxed_sys(slot(p, p) + j, sum);
      }
  }

  // 3. all-gather receives: every other slice from its owner
  for (std::uint32_t i = first; ok && i < nvec; i += stride) {
    const int o = static_cast<int>(i / slice);
    if (o == me.rank) continue;
    uint4 v;
    uint4* p = slot(me.rank, me.rank) + i;
    if (!wait_filled(p, o, v)) break;
    *p = empty_vec();  // plain: kernel order
    store_output<T>(me.out, i, a.count, v);
  }
  store_call_count(calls, blk, nblk, call, threadIdx.x, blockDim.x);
}

// ---------------------------------------------------------------- flag-free one-shot, one copy
// one-shot-ll-bcast: the packets of one-shot-ll (reserved value = empty, the sender's reserved
// inputs sent as the canonical NaN), but one copy per owner. In its call c each rank (the owner)
// stores its input once into bcast slot [c mod 3] of its own area; every peer polls that copy
// (its own GPU's memory on virtual ranks, a peer's over P2P on real GPUs), reduces in rank order
// with its own input in its place, and writes its output. Readers never write into an owner's
// area: the owner itself empties its slot [(c-1) mod 3] (the copy of its call c-1) at the end of
// call c. Per vector and rank: the input, one copy, world-1 reads, one emptying store, the output
// (and the input again), against 3 x world accesses for one-shot-ll.
//
// Ordering, at each access: the copy is stored with st.relaxed.sys (made visible at system scope,
// so a peer GPU polling over NVLink or PCIe sees it, never held here); polls are ld.relaxed.sys
// (never served from a stale L1 line); 32-bit words are single-copy atomic and every element is
// checked, so a half-written vector reads as not yet there; the payload is the flag, so no fence
// (a reader uses only the words it polled). The emptying stores, outputs, the call count and the
// slot lengths are plain stores into the owner's own memory, ordered before the owner's next
// call by kernel completion (griddepcontrol.wait returns once the previous kernel completed and
// its writes are visible).
//
// Rotation (three slots, count c kept apart from one-shot-ll's and two-shot-ll's, so these
// variants mix freely across calls: every rank issues the same sequence of collectives, and the
// bcast area and count are touched by this kernel only).
//  - Emptying is safe: a thread of the owner empties vector i of slot [(c-1) mod 3] only after it
//    read vector i of every peer's call-c copy. A peer writes its call-c copy after its
//    griddepcontrol.wait, i.e. after its call c-1 kernel completed, including every read of the
//    owner's call-(c-1) copy. So no reader still needs the slot.
//  - Refilling is safe: the owner writes slot [(c-1) mod 3] again in call c+2 (kernel order: after
//    its call-c emptying completed). A reader polls that slot in its call c+2, which it reaches only
//    after finishing call c+1, i.e. after reading the owner's call-(c+1) copy, which the owner
//    stored after its call c completed, emptying included. So the reader's poll comes after the
//    emptying (owner: empty -> kernel boundary -> relaxed.sys store; reader: relaxed.sys load that
//    sees it -> kernel boundary -> poll) and can never take the call-(c-1) copy for the call-(c+2)
//    one. Two slots would not do: an owner re-filling slot [c mod 2] would have to empty it first
//    within call c, and a reader of call c could still see the call-(c-2) copy before the emptying
//    lands.
//  - Overwriting is impossible: the owner's call c starts after its call c-1, which read every
//    peer's call-(c-1) copy, so every peer had finished call c-2 and every read of slot [c mod 3]
//    (call c-3) long before.
// A call shorter than the one before still empties all the slot held: vectors up to the current
// length right after their own polls, the rest (up to bc_len) after a __syncthreads by the blocks
// one of whose threads polled a vector (that poll proves every peer started call c). The count
// wraps at a multiple of 3 (kBcWrap), so the slot sequence stays 0, 1, 2, 0, ... across the wrap.
//
// Deadlock freedom: a thread stores all its copies before it polls anything, and every block is
// co-resident (ll_block_cap), so every wait is on a store that does not wait.

/// one-shot-ll-bcast's call count wraps here (a multiple of kBcSlots, near 2^32).
constexpr std::uint32_t kBcWrap = 3u << 30;
static_assert(kBcWrap % kBcSlots == 0, "the bcast count must wrap at a multiple of its slot count");

/// Flag-free one-shot with one copy per owner; see above. kWorld as flag_free_kernel's; same grid,
/// threads and co-residency rules.
template <typename T, int kWorld>
__global__ void __launch_bounds__(kLlMaxThreads, kMinBlocksPerSm) bcast_kernel(const __grid_constant__ LaunchArgs a) {
  constexpr int kR = kWorld != 0 ? kWorld : kMaxRanks;  // per-peer loops' length
  const int world = kWorld != 0 ? kWorld : a.world;
  const bool rank_fastest = kWorld != 2 && a.rank_fastest != 0;
  const unsigned blk = rank_fastest ? blockIdx.y : blockIdx.x;
  const unsigned nblk = rank_fastest ? gridDim.y : gridDim.x;
  const RankPtrs& me = a.r[rank_fastest ? blockIdx.x : blockIdx.y];
  if (me.absent) return;
  __shared__ std::uint32_t s_done;           // bcast calls this rank completed
  __shared__ std::uint32_t s_len[kBcSlots];  // bc_len: vectors each slot holds
  __shared__ int s_failed;                   // a thread of this block gave up waiting
  // at most kLlMaxBytes / 16 vectors: 32-bit indices
  const auto nvec = static_cast<std::uint32_t>((a.count + kPack<T> - 1) / kPack<T>);
  const std::uint32_t first = blk * blockDim.x + threadIdx.x;
  const std::uint32_t stride = nblk * blockDim.x;
  // as flag_free_kernel: parameters only above; the earlier kernels' writes are visible after this
  grid_dependency_wait();
  trigger_dependents();
  const uint4 first_raw = first < nvec ? load_input<T>(me.in, first, a.count) : uint4{};
  char* const own = me.base[me.rank];
  std::uint32_t* const calls = reinterpret_cast<std::uint32_t*>(own + kBcCallsOff);
  std::uint32_t* const lens = reinterpret_cast<std::uint32_t*>(own + kBcLenOff);
  // written by this rank's earlier bcast calls (kernel order); the four loads in flight together
  if (threadIdx.x == 0) {
    s_done = calls[blk];
    s_failed = 0;
  } else if (threadIdx.x <= static_cast<unsigned>(kBcSlots)) {
    s_len[threadIdx.x - 1] = lens[threadIdx.x - 1];
  }
  __syncthreads();
  const std::uint32_t call = s_done + 1 == kBcWrap ? 0 : s_done + 1;
  const int cur = static_cast<int>(call % kBcSlots);
  const int prev = (cur + kBcSlots - 1) % kBcSlots;
  const std::uint32_t prev_len = s_len[prev];
  const std::size_t cur_off = bc_off(a.slot, a.ll_slot, world, cur);
  uint4* const copy = reinterpret_cast<uint4*>(own + cur_off);
  uint4* const old = reinterpret_cast<uint4*>(own + bc_off(a.slot, a.ll_slot, world, prev));
  const uint4 first_in = unreserve<T>(first_raw);
  const auto input = [&](std::uint32_t i) {
    return i == first ? first_in : unreserve<T>(load_input<T>(me.in, i, a.count));
  };

  // 1. the one copy: posted stores into the own area, no waiting
  for (std::uint32_t i = first; i < nvec; i += stride) store_relaxed_sys(copy + i, input(i));

  // 2. every peer's copy of vector i: poll until filled (bounded), reduce in rank order, empty
  //    vector i of the own previous copy (every peer has started this call: see above)
  for (std::uint32_t i = first; i < nvec; i += stride) {
    const uint4 mine = input(i);  // issued before the polls, so its latency hides behind them
    uint4 v[kR];
    unsigned pending = 0;
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if (q < world && q != me.rank) pending |= 1u << q;
    SpinBound bound;
    while (true) {
      // all pending peers' loads in flight at once, then the checks (relaxed.sys polls: see above)
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if (pending & (1u << q)) v[q] = load_relaxed_sys(reinterpret_cast<const uint4*>(me.base[q] + cur_off) + i);
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if ((pending & (1u << q)) && filled<T>(v[q])) pending &= ~(1u << q);
      if (pending == 0 || atomicOr(&s_failed, 0) != 0) break;
      if (bound.expired(a.timeout_ns)) {
        record_wait_failure(me, __ffs(static_cast<int>(pending)) - 1, kLlWait, static_cast<int>(blk), call);
        atomicExch(&s_failed, 1);
        break;
      }
    }
    if (pending != 0) break;                 // gave up: the error word says why; the output is not written
    if (i < prev_len) old[i] = empty_vec();  // plain: kernel order
    store_output<T>(me.out, i, a.count, reduce_regs<T, kR>(v, mine, me.rank, world));
  }

  // 3. the previous copy's vectors beyond this call's length (a shorter call than the one before):
  //    by the blocks that polled at least one vector, after all their polls
  if (prev_len > nvec) {  // the same in every thread of the block (shared words)
    __syncthreads();
    const std::uint32_t active = min(nblk, (nvec + blockDim.x - 1) / blockDim.x);
    if (blk < active && atomicOr(&s_failed, 0) == 0)
      for (std::uint32_t j = nvec + first; j < prev_len; j += active * blockDim.x) old[j] = empty_vec();
  }
  // thread 0 alone here: the whole block's stores measured slower in this kernel at 42-114 KB on
  // 8 virtual ranks (3.22 against 2.83 us at 42 KB; kernels/README.md)
  if (threadIdx.x == 0) {
    store_call_count(calls, blk, nblk, call, 0, 1);
    if (blk == 0) lens[cur] = nvec;  // read by the next call (kernel order), rewritten three calls on
  }
}

/// Launches a flag-free kernel, with programmatic dependent launch.
/// `world2`: the kernel is the 2-rank instantiation (kWorld = 2).
cudaError_t launch_flag_free(void (*kernel)(const LaunchArgs), bool world2, dim3 grid, const LaunchArgs& a,
                             cudaStream_t stream) {
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

/// The flag-free kernel for a world: 2 has its own instantiation (kWorld), any other world (or 0)
/// the any-world one.
template <typename T, bool kPull>
auto flag_free_for(int world) -> void (*)(const LaunchArgs) {
  switch (world) {
    case 2: return flag_free_kernel<T, kPull, 2>;
    default: return flag_free_kernel<T, kPull, 0>;
  }
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
    case Variant::OneShotPull: pull_kernel<T><<<grid, kThreads, 0, stream>>>(a); break;
    case Variant::OneShotPush: push_kernel<T><<<grid, kThreads, 0, stream>>>(a); break;
    case Variant::TwoShot: two_shot_kernel<T><<<grid, kThreads, 0, stream>>>(a); break;
    case Variant::OneShotLL: return launch_flag_free(flag_free_for<T, false>(fixed), fixed == 2, grid, a, stream);
    case Variant::OneShotLLPull: return launch_flag_free(flag_free_for<T, true>(fixed), fixed == 2, grid, a, stream);
    case Variant::TwoShotLL: return launch_flag_free(two_shot_ll_kernel<T>, false, grid, a, stream);
    case Variant::OneShotLLBcast:
      return launch_flag_free(fixed == 2 ? bcast_kernel<T, 2> : bcast_kernel<T, 0>, fixed == 2, grid, a, stream);
    default:  // Auto must be resolved by the caller: refuse, never skip
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
int occupancy_typed() {
  int best = 1 << 30, n = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, pull_kernel<T>, kThreads, 0);
  best = std::min(best, n);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, push_kernel<T>, kThreads, 0);
  best = std::min(best, n);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, two_shot_kernel<T>, kThreads, 0);
  best = std::min(best, n);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, two_shot_ll_kernel<T>, kLlMaxThreads, 0);
  best = std::min(best, n);
  for (auto* k : {bcast_kernel<T, 0>, bcast_kernel<T, 2>}) {
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kLlMaxThreads, 0);
    best = std::min(best, n);
  }
  for (int world : {0, 2}) {  // the any-world and the 2-rank instantiations
    for (auto* k : {flag_free_for<T, false>(world), flag_free_for<T, true>(world)}) {
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
  }
  return cudaErrorInvalidValue;
}

int max_blocks_per_sm() {
  return std::max(1, std::min({occupancy_typed<__nv_bfloat16>(), occupancy_typed<__half>(), occupancy_typed<float>()}));
}

}  // namespace specsim::car::detail
