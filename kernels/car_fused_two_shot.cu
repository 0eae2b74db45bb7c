// The fused all-reduce + residual add + RMSNorm as a two-shot (`two-shot`, FusedVariant::TwoShot):
// the row sum rides on the all-gather, so no exchange between a row's CTAs follows the reduce.
// The other variants (car_fused_norm.cu) reduce every row on every rank, one hop, then meet the
// row's partial sums of squares between the row's CTAs; here each slice of a row is reduced once,
// by its owner rank, which sends the new residual and the slice's partial together.
//
// A row of vpr 16-byte vectors is cut into C = fa.cluster slices (row_slice: the same slices,
// threads and arithmetic as `split`); slice c is owned by rank c % world. Each rank runs C CTAs a
// row group, CTA s handling slice s (RowSplit as `split`). The packets are one-shot-ll's
// (car_ll_one_shot.cu: st.relaxed.sys sends, ld.relaxed.sys polls, the reserved value marks an
// empty slot, the reader empties it, parity from the shared call count), in two rounds:
//   1. a CTA whose slice another rank o owns sends its input vectors to o: region o, slot
//      [parity][me], at the vectors' own positions (never waits);
//   2. the owner CTA polls every peer's vectors, reduces in rank order 0..world-1 (its own input in
//      its place: the sums of one-shot-ll), adds its residual (r = round(round(sum) + residual):
//      residual_in must be the same on every rank, as tensor parallelism keeps it), writes
//      residual_out, sends r to every peer p (region p, slot [parity][p]), folds its threads'
//      squares to the slice's partial (warp butterfly, warps in order: split's CTA partial) and
//      sends the partial to every CTA of every rank, itself included, as one packet;
//   3. every CTA of slice s not owned here polls r from the owner (region me, slot [parity][me]),
//      writes residual_out; every CTA polls the row's C partial packets, folds them in slice order
//      (split's row total: the same bits as every variant and the separate kernel) and writes the
//      norm of its slice.
// The packet of slice c's partial for CTA s of rank p: region p, slot [parity][owner(c)], vector
// row * vpr + begin(c) + s. Those positions are free in this call: round 1 fills slot [q] of a
// region only inside the slices the region's rank owns, and round 2 fills slot [p] of region p only
// outside them, while a packet lies inside slice c, owned by the slot's rank (no slice is shorter
// than C vectors: a row is cut in C > 1 slices only above 64 C vectors). A partial's 32 bits travel
// as 15 + 15 + 2 bits in the packet's first three words, so no 16-bit half is the reserved value.
//
// Ordering: as two-shot-ll (car_ll_two_shot.cu): the data is the flag, a round-2 send carries
// values computed from round-1 polls, emptying stores are plain (kernel order). Rotation: every
// position written in a call is read and emptied by its reader in that call, and an owner writes
// parity p again two calls later only after every peer's round-1 data of that call arrived, so
// every peer had finished this call. Deadlock freedom: every round-1 send comes first and never
// waits; an owner's reduce waits only on round-1 data; every other wait is on an owner's round 2.
// All CTAs of all ranks on a GPU are resident at once (the host caps row groups by occupancy).
// Waits are bounded: an owner's by timeout_ns, the others' by twice that (a call that fails takes
// up to 2 x timeout_ns), so the owner that sees a missing rank names it in the error word first; a
// rank that owns no slice (world > C) reports the owner it waited for as one that never sent the
// slice's values (kOwnerWait), which may itself have waited for the missing rank. A CTA that gives up writes no
// norm from then on.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "car_device.cuh"
#include "car_fused_args.h"
#include "car_fused_math.cuh"
#include "car_fused_rows.cuh"
#include "car_kernels.h"
#include "car_layout.h"
#include "car_ll_device.cuh"
#include "sys_scope_ptx.cuh"

namespace specsim::car::detail {
namespace {

/// A partial sum of squares as a packet: 15 + 15 + 2 bits in words 0..2 (no half all ones).
__device__ __forceinline__ uint4 partial_packet(float v) {
  const std::uint32_t b = __float_as_uint(v);
  return make_uint4(b & 0x7fffu, (b >> 15) & 0x7fffu, b >> 30, 0u);
}
__device__ __forceinline__ float packet_partial(const uint4& p) {
  return __uint_as_float(p.x | (p.y << 15) | (p.z << 30));
}

/// See the top of this file. One vector a thread (threads >= the slice's vectors).
template <typename T>
__global__ void __launch_bounds__(kFusedMaxThreads) fused_two_shot_kernel(const __grid_constant__ FusedLaunchArgs fa) {
  constexpr int kR = kMaxRanks;
  const LaunchArgs& a = fa.base;
  const int world = a.world;
  const unsigned blk = blockIdx.x, nblk = gridDim.x;
  const RankPtrs& me = a.r[blockIdx.y];
  const FusedRank& fr = fa.f[blockIdx.y];
  if (me.absent) return;
  __shared__ int s_failed;
  __shared__ RowSumSmem s_sum;
  const std::size_t vpr = fa.hidden / 8;
  const RowSplit rs = row_split<kFusedTwoShot>(fa.cluster);
  const Slice sl = row_slice(vpr, rs.part, rs.parts);
  const int owner = static_cast<int>(rs.part % static_cast<unsigned>(world));
  const bool owned = owner == me.rank;
  const std::size_t c = sl.begin + rs.local;  // this thread's vector of the row
  const bool has = c < sl.end;
  const uint4* in = static_cast<const uint4*>(me.in);
  grid_dependency_wait();  // the earlier kernels' writes (inputs, emptied slots, call count) visible
  trigger_dependents();
  std::uint32_t* calls = reinterpret_cast<std::uint32_t*>(me.base[me.rank] + kLlCallsOff);
  const std::uint32_t call = calls[blk] + 1;
  if (threadIdx.x == 0) s_failed = 0;
  const int par = static_cast<int>(call & 1);
  const std::size_t area = ll_off(a.slot, a.ll_slot, world, par, 0);
  // slot [par][idx] of rank q's region
  const auto slot = [&](int q, int idx) {
    return reinterpret_cast<uint4*>(me.base[q] + area + a.ll_slot * static_cast<std::size_t>(idx));
  };
  uint4 wt[1];
  load_weights<1>(fr, sl, rs, wt);

  // 1. input vectors of a slice owned elsewhere to its owner (posted stores, no waiting)
  if (!owned && has)
    for (std::size_t row = rs.group; row < fa.tokens; row += rs.groups) {
      const std::size_t i = row * vpr + c;
      store_relaxed_sys(slot(owner, me.rank) + i, unreserve<T>(in[i]));
    }
  __syncthreads();  // s_failed initialised; every thread's call-count load done before the count is stored

  for (std::size_t row = rs.group; row < fa.tokens; row += rs.groups) {
    const std::size_t i = row * vpr + c;
    uint4 r = make_uint4(0, 0, 0, 0);
    float ss = 0.0f;
    bool ok = true;
    if (owned) {
      // 2. reduce the slice, add the residual, send r and (below) the partial
      if (has) {
        const uint4 own = unreserve<T>(in[i]);  // issued before the polls: latencies overlap
        const uint4 res = static_cast<const uint4*>(fr.residual_in)[i];
        uint4 v[kR];
        ok = poll_peers<T, kR>(
            v, [&](int q) { return slot(me.rank, q) + i; }, world, me, &s_failed, a.timeout_ns, static_cast<int>(blk),
            call);
        if (ok) {
#pragma unroll
          for (int q = 0; q < kR; ++q)
            if (q < world && q != me.rank) slot(me.rank, q)[i] = empty_vec();  // plain: kernel order
          r = add_round<T>(reduce_regs<T, kR>(v, own, me.rank, world), res);
#pragma unroll
          for (int k = 1; k < kR; ++k)
            if (k < world) {
              const int p = me.rank + k < world ? me.rank + k : me.rank + k - world;
              store_relaxed_sys(slot(p, p) + i, r);
            }
          static_cast<uint4*>(fr.residual_out)[i] = r;
          ss = add_squares<T>(r, 0.0f);
        }
      }
      // the warps' sums into s_sum.warp, and one barrier that also decides, for every thread alike,
      // whether any gave up (warp 0 may set the flag again in 3b before a slower warp reads it)
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) ss = __fadd_rn(ss, __shfl_xor_sync(0xffffffffu, ss, o));
      if ((threadIdx.x & 31) == 0) s_sum.warp[threadIdx.x >> 5] = ss;
      if (__syncthreads_or(atomicOr(&s_failed, 0) != 0)) break;
      if (threadIdx.x < 32) {
        const uint4 pk = partial_packet(fold_warps(s_sum, 0, blockDim.x >> 5));
        const std::size_t at = row * vpr + sl.begin;
        for (unsigned t = threadIdx.x; t < static_cast<unsigned>(world) * rs.parts; t += 32) {
          const int k = static_cast<int>(t / rs.parts);
          const int p = me.rank + k < world ? me.rank + k : me.rank + k - world;
          store_relaxed_sys(slot(p, me.rank) + at + t % rs.parts, pk);
        }
      }
    } else if (has) {
      // 3a. r of this slice from its owner
      uint4* src = slot(me.rank, me.rank) + i;
      // twice the bound: the owner, itself waiting, gives up first and names the missing rank
      ok = poll_filled<T>(src, r, owner, me, &s_failed, 2 * a.timeout_ns, static_cast<int>(blk), call, kOwnerWait);
      if (ok) {
        *src = empty_vec();  // plain: kernel order
        static_cast<uint4*>(fr.residual_out)[i] = r;
      }
    }
    // 3b. the row's C partials, folded in slice order by warp 0 (lane c: slice c)
    if (threadIdx.x < 32) {
      float v = 0.0f;
      int bad = 0;
      if (threadIdx.x < rs.parts) {
        const Slice from = row_slice(vpr, threadIdx.x, rs.parts);
        const int o = static_cast<int>(threadIdx.x % static_cast<unsigned>(world));
        uint4* p = slot(me.rank, o) + row * vpr + from.begin + rs.part;
        uint4 pk;
        if (poll_filled<T>(p, pk, o, me, &s_failed, 2 * a.timeout_ns, static_cast<int>(blk), call, kOwnerWait)) {
          *p = empty_vec();  // plain: kernel order
          v = packet_partial(pk);
        } else {
          bad = 1;
        }
      }
      __syncwarp();
      const float total = fold_lanes(v, rs.parts);
      if (__any_sync(0xffffffffu, bad) != 0 && threadIdx.x == 0) atomicExch(&s_failed, 1);
      if (threadIdx.x == 0) s_sum.part[0] = total;
    }
    if (__syncthreads_or(atomicOr(&s_failed, 0) != 0)) break;  // the same answer in every thread
    const float inv = inv_rms(s_sum.part[0], fa.hidden, fa.eps);
    if (has) write_norm<T>(fr, me.out, i, r, wt[0], inv, fa.quant_inv_scale);
    __syncthreads();  // s_sum read before the next row writes it
  }
  store_call_count(calls, blk, nblk, call, threadIdx.x, blockDim.x);
}

}  // namespace

template <typename T>
FusedKernel fused_two_shot_for() {
  return fused_two_shot_kernel<T>;
}
template FusedKernel fused_two_shot_for<__nv_bfloat16>();
template FusedKernel fused_two_shot_for<__half>();

}  // namespace specsim::car::detail
