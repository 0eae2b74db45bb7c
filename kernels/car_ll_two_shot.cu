// The flag-free two-shot of the custom all-reduce: two-shot-ll; bf16, fp16, fp32. Helpers:
// car_ll_device.cuh, car_device.cuh; layout of the shared regions: car_layout.h; the launch (grid,
// programmatic dependent launch): car_launch.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "car_device.cuh"
#include "car_kernels.h"
#include "car_layout.h"
#include "car_ll_device.cuh"
#include "sys_scope_ptx.cuh"

namespace specsim::car::detail {
namespace {

// two-shot-ll: the flag-free packets of one-shot-ll (car_ll_one_shot.cu), in two rounds. The message's nvec
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
    if (!poll_peers<T, kR>(
            v, [&](int q) { return slot(me.rank, q) + j; }, world, me, &s_failed, a.timeout_ns, static_cast<int>(blk),
            call)) {  // gave up: the error word says why; nothing more is written
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
    // round 3, bounded by twice timeout_ns: an owner that waits for a missing rank in round 2 sends
    // nothing, so the round-2 waiters, which see the missing rank directly, give up first and name
    // it; a waiter here reports the owner as one that never sent its sum (kOwnerWait)
    if (!poll_filled<T>(p, v, o, me, &s_failed, 2 * a.timeout_ns, static_cast<int>(blk), call, kOwnerWait)) break;
    *p = empty_vec();  // plain: kernel order
    store_output<T>(me.out, i, a.count, v);
  }
  store_call_count(calls, blk, nblk, call, threadIdx.x, blockDim.x);
}

}  // namespace

/// two-shot-ll's kernel (one instantiation: any world).
template <typename T>
Kernel two_shot_ll_for() {
  return two_shot_ll_kernel<T>;
}

template Kernel two_shot_ll_for<__nv_bfloat16>();
template Kernel two_shot_ll_for<__half>();
template Kernel two_shot_ll_for<float>();

}  // namespace specsim::car::detail
