#pragma once
// The fused all-reduce + add + RMSNorm's row split and row sums (car_fused_norm.cu,
// car_fused_two_shot.cu): which CTA and thread own which vectors of a row, the weight loads and
// norm stores of a thread's vectors, and the sum of squares over a row's CTAs for each variant
// (cluster, cluster-push, block, split: see the top of car_fused_norm.cu; two-shot folds the same
// CTA partials after its all-gather: car_fused_two_shot.cu). Internal to those files.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "car_device.cuh"
#include "car_fused_args.h"
#include "car_fused_math.cuh"
#include "car_layout.h"
#include "car_ll_device.cuh"

namespace specsim::car::detail {
namespace {

namespace cg = cooperative_groups;

/// The vectors [begin, end) of a row that CTA `part` of `parts` owns (the last may own fewer).
struct Slice {
  std::size_t begin, end;
};
__device__ __forceinline__ Slice row_slice(std::size_t vpr, unsigned part, unsigned parts) {
  const std::size_t len = (vpr + parts - 1) / parts;
  const std::size_t b = len * part;
  return {b < vpr ? b : vpr, b + len < vpr ? b + len : vpr};
}

/// The shared memory of the row sum: warp partials, and the CTA's partial and failure flag
/// double-buffered by row (a CTA writes buffer p again two rows later, after the next cluster
/// barrier, which every sibling passes only once it has read buffer p).
struct RowSumSmem {
  float warp[kFusedBlockMaxThreads / 32];
  float part[2];  ///< cluster: this CTA's partial; block, split: the row's total
  int failed[2];
  float sib[2][kFusedMaxCluster];  ///< cluster-push: the siblings' partials, written by them
  int sib_failed[2][kFusedMaxCluster];
};

/// Where a thread's work lies: slice `part` of `parts` of a row, thread `local` of the slice's
/// `lanes`, rows group, group + groups, ... (see the variants at the top of this file).
struct RowSplit {
  unsigned part, parts, local, lanes, group, groups;
};
template <int kMode>
__device__ __forceinline__ RowSplit row_split(int parts) {
  RowSplit s{};
  if constexpr (kMode == kFusedBlock) {
    s.parts = static_cast<unsigned>(parts);
    s.lanes = blockDim.x / s.parts;
    s.part = threadIdx.x / s.lanes;
    s.local = threadIdx.x % s.lanes;
    s.group = blockIdx.x;
    s.groups = gridDim.x;
  } else {
    if constexpr (kMode == kFusedSplit || kMode == kFusedTwoShot) {
      s.parts = static_cast<unsigned>(parts);
      s.part = blockIdx.x % s.parts;
    } else {
      s.parts = cg::this_cluster().num_blocks();
      s.part = cg::this_cluster().block_rank();
    }
    s.lanes = blockDim.x;
    s.local = threadIdx.x;
    s.group = blockIdx.x / s.parts;
    s.groups = gridDim.x / s.parts;
  }
  return s;
}

/// Writes row vector i's norm output (and fp8 copy) from the new residual `r` and weight vector `w`.
template <typename T>
__device__ __forceinline__ void write_norm(const FusedRank& fr, void* norm_out, std::size_t i, const uint4& r,
                                           const uint4& w, float inv, float quant_inv_scale) {
  const uint4 o = normalize<T>(r, w, inv);
  static_cast<uint4*>(norm_out)[i] = o;
  if (fr.quant_out != nullptr) static_cast<uint2*>(fr.quant_out)[i] = quantize<T>(o, quant_inv_scale);
}

/// The weight vectors a thread's columns use, the same for every row: loaded once, before the
/// first reduce, so that the norm waits for no load.
template <int kHeld>
__device__ __forceinline__ void load_weights(const FusedRank& fr, const Slice& sl, const RowSplit& rs,
                                             uint4 (&w)[kHeld]) {
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const std::size_t c = sl.begin + rs.local + static_cast<std::size_t>(k) * rs.lanes;
    w[k] = c < sl.end ? static_cast<const uint4*>(fr.weight)[c] : make_uint4(0, 0, 0, 0);
  }
}

/// Warp butterfly of every thread's `ss`, the warps' sums into sm.warp; one block barrier.
__device__ __forceinline__ void warp_partials(float ss, RowSumSmem& sm) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss = __fadd_rn(ss, __shfl_xor_sync(0xffffffffu, ss, o));
  if ((threadIdx.x & 31) == 0) sm.warp[threadIdx.x >> 5] = ss;
  __syncthreads();
}

/// 0 + warps [w0, w0 + n) in order: a slice's partial (n <= kFusedMaxThreads / 32; unrolled so
/// the loads are in flight together).
__device__ __forceinline__ float fold_warps(const RowSumSmem& sm, unsigned w0, unsigned n) {
  float x[kFusedMaxThreads / 32];
#pragma unroll
  for (unsigned w = 0; w < kFusedMaxThreads / 32; ++w) x[w] = w < n ? sm.warp[w0 + w] : 0.0f;
  float cta = 0.0f;
#pragma unroll
  for (unsigned w = 0; w < kFusedMaxThreads / 32; ++w)
    if (w < n) cta = __fadd_rn(cta, x[w]);
  return cta;
}

/// 0 + lane 0's v + lane 1's v + ... + lane (n-1)'s v, on every lane of the (whole) warp.
__device__ __forceinline__ float fold_lanes(float v, unsigned n) {
  float total = 0.0f;
  for (unsigned c = 0; c < n; ++c) total = __fadd_rn(total, __shfl_sync(0xffffffffu, v, static_cast<int>(c)));
  return total;
}

/// The split variant's partial words: 64-bit relaxed gpu-scope accesses (the word is the flag).
__device__ __forceinline__ void fused_store_word(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long fused_load_word(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

/// Sum of every thread's `ss` over the cluster in a fixed order (warp butterfly, warps in order,
/// then the CTAs' partials in cluster rank order); every thread of the cluster gets the same
/// value. `failed` (may be null): a shared flag that threads set while polling, final once they
/// reach the first barrier; `stop` = any CTA's flag was set (the same in every CTA). Contains one
/// block barrier and one cluster barrier; `row_iter` = rows this CTA went through before.
__device__ __forceinline__ float row_sum(float ss, RowSumSmem& sm, const int* failed, unsigned row_iter, bool& stop) {
  const cg::cluster_group cluster = cg::this_cluster();
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss = __fadd_rn(ss, __shfl_xor_sync(0xffffffffu, ss, o));
  if ((threadIdx.x & 31) == 0) sm.warp[threadIdx.x >> 5] = ss;
  __syncthreads();
  const unsigned p = row_iter & 1;
  if (threadIdx.x == 0) {
    float cta = 0.0f;
    const unsigned warps = blockDim.x >> 5;
    for (unsigned w = 0; w < warps; ++w) cta = __fadd_rn(cta, sm.warp[w]);
    sm.part[p] = cta;
    sm.failed[p] = failed != nullptr ? *static_cast<const volatile int*>(failed) : 0;
  }
  // release/acquire: every CTA's partial visible to the cluster; also orders this row's reads of
  // sm.warp before the next row's writes
  cluster.sync();
  float total = 0.0f;
  int any = 0;
  const unsigned parts = cluster.num_blocks();
  for (unsigned c = 0; c < parts; ++c) {
    total = __fadd_rn(total, *cluster.map_shared_rank(&sm.part[p], c));
    any |= *cluster.map_shared_rank(&sm.failed[p], c);
  }
  stop = any != 0;
  return total;
}

/// cluster-push writes into its siblings' shared memory, which CUDA allows only once every CTA of
/// the cluster is known to have started. Every thread arrives (relaxed: no memory order) on the
/// cluster barrier at the kernel's start and waits on it once its sends are out, so the wait's
/// latency passes behind the data in flight: 8 virtual ranks of one H200, about 0.05-0.1 us at 1-3
/// tokens against no barrier, and 0.02-0.06 us less than waiting just before the first remote
/// write (traces/arbench/fused-cluster-push-started-h200-2026-12-03/).
__device__ __forceinline__ void cluster_started_arrive() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_started_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }

/// cluster-push's row sum: as row_sum, but thread c writes this CTA's partial (and failure flag)
/// into sibling c's shared memory before the one cluster barrier, and every thread then adds the
/// partials from its own shared memory in cluster rank order. A sibling writes buffer p again two
/// rows later, after the next barrier, which this CTA reaches only once it has read buffer p. Every
/// CTA of the cluster is known started by then (cluster_started_arrive).
__device__ __forceinline__ float row_sum_push(float ss, RowSumSmem& sm, const int* failed, unsigned row_iter,
                                              bool& stop) {
  const cg::cluster_group cluster = cg::this_cluster();
  warp_partials(ss, sm);
  const unsigned p = row_iter & 1, parts = cluster.num_blocks(), me = cluster.block_rank();
  if (threadIdx.x < parts) {
    const float cta = fold_warps(sm, 0, blockDim.x >> 5);
    const int f = failed != nullptr ? *static_cast<const volatile int*>(failed) : 0;
    *cluster.map_shared_rank(&sm.sib[p][me], threadIdx.x) = cta;
    *cluster.map_shared_rank(&sm.sib_failed[p][me], threadIdx.x) = f;
  }
  cluster.sync();  // arrive.release / wait.acquire: the siblings' writes into this CTA visible
  float total = 0.0f;
  int any = 0;
#pragma unroll
  for (unsigned c = 0; c < kFusedMaxCluster; ++c)
    if (c < parts) {
      total = __fadd_rn(total, sm.sib[p][c]);
      any |= sm.sib_failed[p][c];
    }
  stop = any != 0;
  return total;
}

/// block's row sum: the thread groups' partials (warps in order) folded in group order by warp 0,
/// through shared memory; two block barriers.
__device__ __forceinline__ float row_sum_block(float ss, RowSumSmem& sm, const int* failed, unsigned row_iter,
                                               const RowSplit& rs, bool& stop) {
  warp_partials(ss, sm);
  const unsigned p = row_iter & 1;
  if (threadIdx.x < 32) {
    const unsigned wp = rs.lanes >> 5;
    const float part = threadIdx.x < rs.parts ? fold_warps(sm, threadIdx.x * wp, wp) : 0.0f;
    const float total = fold_lanes(part, rs.parts);
    if (threadIdx.x == 0) {
      sm.part[p] = total;
      sm.failed[p] = failed != nullptr ? *static_cast<const volatile int*>(failed) : 0;
    }
  }
  __syncthreads();
  stop = sm.failed[p] != 0;
  return sm.part[p];
}

/// split's row sum: thread 0 publishes this CTA's partial as tag << 32 | bits in words[row
/// parity][this CTA]; lane c of warp 0 waits (bounded) for slice c's word of this row; warp 0 folds
/// them in slice order. tag = (call mod 2^30) << 2 | bit 1 of the row | failed. A word is written
/// again two rows later, after its writer read every sibling's word of the row between, so a
/// reader finds this row's word or the one of two rows before (the row bit tells them apart); a
/// word of an earlier call carries another call number, unless its slot went unwritten for a
/// multiple of 2^30 calls.
__device__ __forceinline__ float row_sum_split(float ss, RowSumSmem& sm, const int* failed, unsigned row_iter,
                                               const RowSplit& rs, unsigned long long* partials, std::uint32_t call,
                                               const RankPtrs& me, std::uint64_t timeout_ns, bool& stop) {
  warp_partials(ss, sm);
  const unsigned p = row_iter & 1;
  const std::uint32_t tag = (call << 2) | (((row_iter >> 1) & 1u) << 1);
  unsigned long long* words = partials + static_cast<std::size_t>(p) * kMaxBlocks + rs.group * rs.parts;
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      const float cta = fold_warps(sm, 0, blockDim.x >> 5);
      const std::uint32_t f = *static_cast<const volatile int*>(failed) != 0 ? 1u : 0u;
      fused_store_word(words + rs.part, (static_cast<unsigned long long>(tag | f) << 32) | __float_as_uint(cta));
    }
    float v = 0.0f;
    int bad = 0;
    if (threadIdx.x < rs.parts) {
      SpinBound bound;
      while (true) {
        const unsigned long long w = fused_load_word(words + threadIdx.x);
        const auto hi = static_cast<std::uint32_t>(w >> 32);
        if ((hi & ~1u) == tag) {
          v = __uint_as_float(static_cast<std::uint32_t>(w));
          bad = static_cast<int>(hi & 1u);
          break;
        }
        if (bound.expired(timeout_ns)) {  // a sibling CTA never published (not co-resident)
          record_wait_failure(me, me.rank, kLlWait, static_cast<int>(blockIdx.x), call);
          bad = 1;
          break;
        }
      }
    }
    __syncwarp();
    const float total = fold_lanes(v, rs.parts);
    const int any = __any_sync(0xffffffffu, bad);
    if (threadIdx.x == 0) {
      sm.part[p] = total;
      sm.failed[p] = any;
    }
  }
  __syncthreads();
  stop = sm.failed[p] != 0;
  return sm.part[p];
}

}  // namespace
}  // namespace specsim::car::detail
