// All-reduce fused with the residual add and RMSNorm (bf16, fp16), and the separate add+RMSNorm
// kernel it replaces (for comparison: arbench, tests). The all-reduce half is one-shot-ll's
// protocol (car_ll_one_shot.cu: push into slot [parity][me] of every peer, poll the own slots,
// the data is the flag, the slots emptied by their reader, parity from the shared call count), on
// the same slots and count, so fused and plain flag-free calls may alternate. What differs is
// the work split: one thread-block cluster of C CTAs owns whole rows (a row at a time, rows cl,
// cl + clusters, ...), CTA s of the cluster the row's vectors [s * slice, (s + 1) * slice).
// C (fused_cluster: 1, 2, 4 or 8) leaves a thread about one 16-byte vector, as in one-shot-ll's
// blocks: one block a row would leave only 1-8 blocks a rank at the verify's few tokens. After
// the reduce each CTA sums the squares of its slice, the C partials go through distributed
// shared memory (one cluster barrier a row), and every CTA normalizes its slice with the same
// total; no second exchange between ranks, no grid barrier. Each rank computes every row itself,
// in the same order with the same split, so all ranks agree bitwise.
//
// Variants (FusedVariant, Options::fused_variant; the kernel template's kMode, FusedMode): the
// split above is `cluster`. `cluster-push`: the same clusters, but each CTA writes its partial into
// every sibling's shared memory before the row's cluster barrier and reads only its own after it:
// no remote loads after the barrier, no final cluster barrier (no CTA reads a sibling's memory
// after its last barrier); a relaxed cluster barrier, arrived on at the start and waited on once
// the sends are out, makes every sibling known started before the first write. `block`: no cluster;
// one CTA a row whose C thread groups play the C CTAs (thread group g = CTA g: same slices, lanes
// and warps), the partials meet in shared memory. `split`: no cluster; C CTAs a row as in
// `cluster`, each publishing its partial as one 64-bit word (tag | value) in a per-rank array in
// global memory and reading its siblings' words (double-buffered by row parity; the tag is the call
// count and a row bit, so a stale word does not match and nothing is reset: row_sum_split). Every
// variant adds in the order below, so all write the same bits. `two-shot`, with the same slices and
// order but each slice reduced once by its owner rank, is car_fused_two_shot.cu.
//
// Arithmetic (fixed order, no contraction, identical in the fused and the separate kernel):
//   s = the all-reduce sum rounded to T (rank order 0..world-1, as every variant)
//   r = round_T(s + residual)                      -> residual_out
//   ss = sum of r^2: per thread over its vectors in element order (fma), then a warp butterfly,
//        then the warps' partials in warp order (a CTA's partial), then the CTAs' partials in
//        cluster rank order (the separate kernel runs the same clusters, so it matches bitwise)
//   inv = rsqrt(ss / hidden + eps)
//   o = round_T((r * inv) * weight)                -> norm_out
//   q = fp8 e4m3 (round to nearest even, saturating) of o / quant_scale -> quant_out (optional)
//
// Co-residency: the host caps clusters per rank so that every CTA of every rank on a GPU is
// resident at once, as for the other flag-free kernels (fused_max_groups: the
// cudaOccupancyMaxActiveClusters count, which places a cluster whole on one GPU processing
// cluster). Every wait is bounded; a CTA that gives up records the error word and its cluster
// stops at the row's cluster barrier with all its threads (each CTA's shared flag, published
// with its partial and read by every CTA of the cluster after the barrier), writing no norm
// output for that row. Every CTA of a cluster passes the same number of cluster barriers, and
// one more before it exits, so no CTA leaves while a sibling may still read its shared memory.
//
// Files: the element arithmetic is in car_fused_math.cuh, the row split and the variants' row sums
// in car_fused_rows.cuh; the kernels and their launch here.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
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

namespace cg = cooperative_groups;

static_assert(kPack<__nv_bfloat16> == 8 && kPack<__half> == 8, "a vector is 8 elements");

/// Most threads a CTA of mode kMode (block: one CTA a row).
template <int kMode>
inline constexpr int kModeMaxThreads = kMode == kFusedBlock ? kFusedBlockMaxThreads : kFusedMaxThreads;

/// The row sum of mode kMode (the fused kernel's: `failed` its shared flag).
template <int kMode>
__device__ __forceinline__ float mode_row_sum(float ss, RowSumSmem& sm, const int* failed, unsigned row_iter,
                                              const RowSplit& rs, const FusedLaunchArgs& fa, const RankPtrs& me,
                                              std::uint32_t call, unsigned long long* partials, bool& stop) {
  if constexpr (kMode == kFusedCluster) return row_sum(ss, sm, failed, row_iter, stop);
  if constexpr (kMode == kFusedClusterPush) return row_sum_push(ss, sm, failed, row_iter, stop);
  if constexpr (kMode == kFusedBlock) return row_sum_block(ss, sm, failed, row_iter, rs, stop);
  if constexpr (kMode == kFusedSplit)
    return row_sum_split(ss, sm, failed, row_iter, rs, partials, call, me, fa.base.timeout_ns, stop);
  return 0.0f;
}

/// The fused kernel (see the top of this file): kMode a FusedMode (cluster modes launched in
/// clusters of fa.cluster CTAs along x). kWorld: 2, or 0 for any world (read from the arguments);
/// kHeld: vectors a thread holds of its slice (ceil(slice / lanes), at most kFusedMaxHeld).
template <typename T, int kWorld, int kHeld, int kMode>
__global__ void __launch_bounds__(kModeMaxThreads<kMode>) fused_kernel(const __grid_constant__ FusedLaunchArgs fa) {
  const LaunchArgs& a = fa.base;
  constexpr int kR = kWorld != 0 ? kWorld : kMaxRanks;
  const int world = kWorld != 0 ? kWorld : a.world;
  const unsigned blk = blockIdx.x, nblk = gridDim.x;
  const RankPtrs& me = a.r[blockIdx.y];
  const FusedRank& fr = fa.f[blockIdx.y];
  if (me.absent) return;  // the whole cluster (one rank: the cluster spans x only)
  __shared__ int s_failed;
  __shared__ RowSumSmem s_sum;
  const std::size_t vpr = fa.hidden / 8;
  const RowSplit rs = row_split<kMode>(fa.cluster);
  const Slice sl = row_slice(vpr, rs.part, rs.parts);
  const uint4* in = static_cast<const uint4*>(me.in);
  // Programmatic dependent launch: the inputs, residual, weight, the call count and the emptied
  // slots of earlier kernels are visible after the wait (car_ll_one_shot.cu).
  grid_dependency_wait();
  trigger_dependents();
  if constexpr (kMode == kFusedClusterPush) cluster_started_arrive();  // waited on once the sends are out
  // The first vector's input is loaded before the call count, so that the two loads' latencies
  // overlap (a use stalls a warp's later instructions; the sends need both), as one-shot-ll's
  // prologue does: 8 virtual ranks of one H200, 42 KB, 0.46 us off `split` and 0.14 us off
  // `cluster-push` (traces/arbench/fused-hoist-h200-2026-12-02/).
  const std::size_t first_i = rs.group * vpr + sl.begin + rs.local;
  const bool has_first = rs.group < fa.tokens && sl.begin + rs.local < sl.end;
  const uint4 first_raw = has_first ? in[first_i] : make_uint4(0, 0, 0, 0);
  std::uint32_t* calls = reinterpret_cast<std::uint32_t*>(me.base[me.rank] + kLlCallsOff);
  const std::uint32_t call = calls[blk] + 1;
  if (threadIdx.x == 0) s_failed = 0;
  const int par = static_cast<int>(call & 1);
  const std::size_t area = ll_off(a.slot, a.ll_slot, world, par, 0);
  char* const own_area = me.base[me.rank] + area;
  const std::size_t my_off = a.ll_slot * static_cast<std::size_t>(me.rank);
  uint4 wt[kHeld];
  load_weights<kHeld>(fr, sl, rs, wt);

  // send this thread's vectors of every row its group owns to every peer (rank+1, rank+2, ...:
  // car_ll_one_shot.cu)
  for (std::size_t row = rs.group; row < fa.tokens; row += rs.groups)
    for (std::size_t c = sl.begin + rs.local; c < sl.end; c += rs.lanes) {
      const std::size_t i = row * vpr + c;
      const uint4 v = unreserve<T>(has_first && i == first_i ? first_raw : in[i]);
#pragma unroll
      for (int k = 1; k < kR; ++k)
        if (k < world) {
          const int q = me.rank + k < world ? me.rank + k : me.rank + k - world;
          store_relaxed_sys(reinterpret_cast<uint4*>(me.base[q] + area + my_off) + i, v);
        }
    }
  // The first vector's residual, loaded once the sends are out, so that its latency passes
  // behind the barrier and the polls instead of holding the reduce's add (loaded before the sends
  // it was slower): 8 virtual ranks of one H200, 42 KB, `split` 5.00 -> 4.83 us, `cluster-push`
  // 5.03 -> 4.60; one token 0.1 us slower (traces/arbench/fused-hoist-h200-2026-12-02/).
  const uint4 first_res = has_first ? static_cast<const uint4*>(fr.residual_in)[first_i] : make_uint4(0, 0, 0, 0);
  if constexpr (kMode == kFusedClusterPush) cluster_started_wait();  // before any write into a sibling
  // s_failed initialised and every thread's count load completed
  __syncthreads();

  unsigned row_iter = 0;
  for (std::size_t row = rs.group; row < fa.tokens; row += rs.groups, ++row_iter) {
    uint4 held[kHeld];
    float ss = 0.0f;
    bool ok = true;
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      held[k] = make_uint4(0, 0, 0, 0);
      const std::size_t c = sl.begin + rs.local + static_cast<std::size_t>(k) * rs.lanes;
      if (c >= sl.end || !ok) continue;
      const std::size_t i = row * vpr + c;
      const bool is_first = has_first && i == first_i;
      const uint4 own = unreserve<T>(is_first ? first_raw : in[i]);  // issued before the polls: latencies overlap
      const uint4 res = is_first ? first_res : static_cast<const uint4*>(fr.residual_in)[i];
      uint4 v[kR];
      const auto peer_slot = [&](int q) {
        return reinterpret_cast<const uint4*>(own_area + a.ll_slot * static_cast<std::size_t>(q)) + i;
      };
      if (!poll_peers<T, kR>(v, peer_slot, world, me, &s_failed, a.timeout_ns, static_cast<int>(blk), call)) {
        ok = false;  // gave up (or a sibling thread did): no output for this row
        continue;
      }
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if (q < world && q != me.rank)
          reinterpret_cast<uint4*>(own_area + a.ll_slot * static_cast<std::size_t>(q))[i] = empty_vec();
      const uint4 r = add_round<T>(reduce_regs<T, kR>(v, own, me.rank, world), res);
      static_cast<uint4*>(fr.residual_out)[i] = r;
      held[k] = r;
      ss = add_squares<T>(r, ss);
    }
    // The whole CTA's reduce done before any thread starts the row sum: measured, not explained
    // (8 virtual ranks of one H200, one graph of 200 calls: split at 7168 x 3 5.75 -> 5.19 us,
    // 7168 x 1 5.09 -> 4.53, cluster-push alike; the SASS issues the weight and residual loads
    // ahead of the polls either way; traces/arbench/fused-barrier-h200-2026-12-02/).
    __syncthreads();
    bool stop = false;
    const float total = mode_row_sum<kMode>(ss, s_sum, &s_failed, row_iter, rs, fa, me, call, fr.partials, stop);
    if (stop) break;  // uniform over the row's CTAs: every one read the same flags
    const float inv = inv_rms(total, fa.hidden, fa.eps);
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      const std::size_t c = sl.begin + rs.local + static_cast<std::size_t>(k) * rs.lanes;
      if (c < sl.end) write_norm<T>(fr, me.out, row * vpr + c, held[k], wt[k], inv, fa.quant_inv_scale);
    }
  }
  // cluster: no CTA exits while a sibling may still read its partials (distributed shared
  // memory). cluster-push: every access to a sibling's memory came before the last row barrier.
  if constexpr (kMode == kFusedCluster) cg::this_cluster().sync();
  store_call_count(calls, blk, nblk, call, threadIdx.x, blockDim.x);
}

/// The separate add+RMSNorm: what runs after a plain all-reduce (rank y's output in r[y].in; y =
/// blockIdx.y, several ranks of one GPU in one launch as the virtual all-reduce). kMode
/// kFusedCluster (the same clusters, slices, threads and arithmetic as fused_kernel) or
/// kFusedBlock (one CTA a row, its thread groups the cluster's CTAs): the outputs agree bitwise.
template <typename T, int kHeld, int kMode>
__global__ void __launch_bounds__(kModeMaxThreads<kMode>)
    add_rmsnorm_kernel(const __grid_constant__ FusedLaunchArgs fa) {
  __shared__ RowSumSmem s_sum;
  const RankPtrs& me = fa.base.r[blockIdx.y];
  const FusedRank& fr = fa.f[blockIdx.y];
  const std::size_t vpr = fa.hidden / 8;
  const RowSplit rs = row_split<kMode>(fa.cluster);
  const Slice sl = row_slice(vpr, rs.part, rs.parts);
  grid_dependency_wait();
  trigger_dependents();
  uint4 wt[kHeld];
  load_weights<kHeld>(fr, sl, rs, wt);
  unsigned row_iter = 0;
  for (std::size_t row = rs.group; row < fa.tokens; row += rs.groups, ++row_iter) {
    uint4 held[kHeld];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      held[k] = make_uint4(0, 0, 0, 0);
      const std::size_t c = sl.begin + rs.local + static_cast<std::size_t>(k) * rs.lanes;
      if (c >= sl.end) continue;
      const std::size_t i = row * vpr + c;
      const uint4 r = add_round<T>(static_cast<const uint4*>(me.in)[i], static_cast<const uint4*>(fr.residual_in)[i]);
      static_cast<uint4*>(fr.residual_out)[i] = r;
      held[k] = r;
      ss = add_squares<T>(r, ss);
    }
    bool stop = false;
    float total = 0.0f;
    if constexpr (kMode == kFusedBlock)
      total = row_sum_block(ss, s_sum, nullptr, row_iter, rs, stop);
    else
      total = row_sum(ss, s_sum, nullptr, row_iter, stop);
    const float inv = inv_rms(total, fa.hidden, fa.eps);
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      const std::size_t c = sl.begin + rs.local + static_cast<std::size_t>(k) * rs.lanes;
      if (c < sl.end) write_norm<T>(fr, me.out, row * vpr + c, held[k], wt[k], inv, fa.quant_inv_scale);
    }
  }
  // as fused_kernel: siblings may still read this CTA's partials
  if constexpr (kMode != kFusedBlock) cg::this_cluster().sync();
}

/// Threads of a row slice: a CTA's threads, or for block a CTA's thread group.
int slice_lanes(const FusedLaunchArgs& a) {
  return a.mode == kFusedBlock && a.cluster > 0 ? a.base.threads / a.cluster : a.base.threads;
}

/// Vectors a thread holds of its slice for this shape (1, the one instantiated; the template
/// keeps room for more); 0 when the shape is not one the kernels run.
int held_for(const FusedLaunchArgs& a) {
  const int c = a.cluster;
  if (c < 1 || c > kFusedMaxCluster || (c & (c - 1)) != 0 || a.mode < kFusedCluster || a.mode > kFusedTwoShot) return 0;
  if (a.mode == kFusedBlock && (a.base.threads % c != 0 || a.base.threads > kFusedBlockMaxThreads)) return 0;
  const int t = slice_lanes(a);
  if (t < 32 || t > kFusedMaxThreads || t % 32 != 0 || a.hidden == 0 || a.hidden % 8 != 0 || a.tokens == 0) return 0;
  const std::size_t slice = (a.hidden / 8 + static_cast<std::size_t>(c) - 1) / static_cast<std::size_t>(c);
  const std::size_t held = (slice + static_cast<std::size_t>(t) - 1) / static_cast<std::size_t>(t);
  return held <= static_cast<std::size_t>(kFusedMaxHeld) ? 1 : 0;
}

bool clustered(int mode) { return mode == kFusedCluster || mode == kFusedClusterPush; }

template <typename T, int kWorld>
FusedKernel fused_for(int mode, int held) {
  if (held != 1) return nullptr;
  switch (mode) {
    case kFusedCluster: return fused_kernel<T, kWorld, 1, kFusedCluster>;
    case kFusedClusterPush: return fused_kernel<T, kWorld, 1, kFusedClusterPush>;
    case kFusedBlock: return fused_kernel<T, kWorld, 1, kFusedBlock>;
    case kFusedSplit: return fused_kernel<T, kWorld, 1, kFusedSplit>;
    case kFusedTwoShot: return fused_two_shot_for<T>();  // any world: car_fused_two_shot.cu
    default: return nullptr;
  }
}

/// The separate kernel for `mode`: the cluster one for the cluster modes, else one CTA a row.
template <typename T>
FusedKernel norm_for(int mode, int held) {
  if (held != 1) return nullptr;
  return clustered(mode) ? add_rmsnorm_kernel<T, 1, kFusedCluster> : add_rmsnorm_kernel<T, 1, kFusedBlock>;
}

/// The launch configuration: clusters of `cluster` CTAs along x (0: no cluster); with `pdl`,
/// programmatic dependent launch. `attr` must outlive the configuration.
cudaLaunchConfig_t launch_config(dim3 grid, int threads, int cluster, cudaStream_t stream, cudaLaunchAttribute* attr,
                                 bool pdl) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  unsigned n = 0;
  if (cluster > 0) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = static_cast<unsigned>(cluster);
    attr[n].val.clusterDim.y = 1;
    attr[n].val.clusterDim.z = 1;
    ++n;
  }
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  return cfg;
}

cudaError_t launch_mode(FusedKernel k, dim3 grid, const FusedLaunchArgs& a, cudaStream_t stream) {
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg =
      launch_config(grid, a.base.threads, clustered(a.mode) ? a.cluster : 0, stream, attr, true);
  return cudaLaunchKernelEx(&cfg, k, a);
}

}  // namespace

template <typename T>
cudaError_t launch_fused(const FusedLaunchArgs& a, cudaStream_t stream) {
  const LaunchArgs& b = a.base;
  const int held = held_for(a);
  // CTAs a row group: the cluster's, or one (block)
  const int per_group = a.mode == kFusedBlock ? 1 : a.cluster;
  if (held == 0 || b.blocks < 1 || b.blocks > kMaxBlocks || b.blocks % per_group != 0 || b.ranks < 1 ||
      b.ranks > kMaxRanks || b.world < kMinRanks || b.world > kMaxRanks ||
      static_cast<std::size_t>(b.blocks / per_group) > a.tokens)
    return cudaErrorInvalidConfiguration;
  if (a.mode == kFusedSplit)
    for (int r = 0; r < b.ranks; ++r)
      if (a.f[r].partials == nullptr) return cudaErrorInvalidConfiguration;
  const FusedKernel k = b.world == 2 ? fused_for<T, 2>(a.mode, held) : fused_for<T, 0>(a.mode, held);
  if (k == nullptr) return cudaErrorInvalidConfiguration;
  return launch_mode(k, dim3(static_cast<unsigned>(b.blocks), static_cast<unsigned>(b.ranks)), a, stream);
}

template <typename T>
cudaError_t launch_add_rmsnorm(const FusedLaunchArgs& a, cudaStream_t stream) {
  const int held = held_for(a);
  const FusedKernel k = norm_for<T>(a.mode, held);
  if (k == nullptr || a.base.ranks < 1 || a.base.ranks > kMaxRanks) return cudaErrorInvalidConfiguration;
  // one row group a row; a cluster's CTAs along x (block: one CTA)
  const int per_group = clustered(a.mode) ? a.cluster : 1;
  const auto groups = static_cast<unsigned>(std::min<std::size_t>(a.tokens, 65535 / kFusedMaxCluster));
  return launch_mode(k, dim3(groups * static_cast<unsigned>(per_group), static_cast<unsigned>(a.base.ranks)), a,
                     stream);
}

template cudaError_t launch_fused<__nv_bfloat16>(const FusedLaunchArgs&, cudaStream_t);
template cudaError_t launch_fused<__half>(const FusedLaunchArgs&, cudaStream_t);
template cudaError_t launch_add_rmsnorm<__nv_bfloat16>(const FusedLaunchArgs&, cudaStream_t);
template cudaError_t launch_add_rmsnorm<__half>(const FusedLaunchArgs&, cudaStream_t);

namespace {
template <int kMode>
void fused_mode_kernels(FusedKernel (&k)[4]) {
  k[0] = fused_kernel<__nv_bfloat16, 2, 1, kMode>;
  k[1] = fused_kernel<__nv_bfloat16, 0, 1, kMode>;
  k[2] = fused_kernel<__half, 2, 1, kMode>;
  k[3] = fused_kernel<__half, 0, 1, kMode>;
}
}  // namespace

int fused_max_groups(int mode, int cluster, int threads) {
  FusedKernel kernels[4] = {};
  switch (mode) {
    case kFusedCluster: fused_mode_kernels<kFusedCluster>(kernels); break;
    case kFusedClusterPush: fused_mode_kernels<kFusedClusterPush>(kernels); break;
    case kFusedBlock: fused_mode_kernels<kFusedBlock>(kernels); break;
    case kFusedTwoShot:
      kernels[0] = kernels[1] = fused_two_shot_for<__nv_bfloat16>();
      kernels[2] = kernels[3] = fused_two_shot_for<__half>();
      break;
    default: fused_mode_kernels<kFusedSplit>(kernels); break;
  }
  int sms = 1, dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    sms = 1;
  }
  int best = 1 << 30;
  for (FusedKernel k : kernels) {
    int n = 0;
    if (clustered(mode)) {
      cudaLaunchAttribute attr[2];
      // the grid only has to be a whole number of clusters; the answer is device-wide
      const cudaLaunchConfig_t cfg =
          launch_config(dim3(static_cast<unsigned>(cluster)), threads, cluster, nullptr, attr, false);
      if (cudaOccupancyMaxActiveClusters(&n, k, &cfg) != cudaSuccess) n = 0;
    } else {
      int per_sm = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, 0) != cudaSuccess) per_sm = 0;
      // split, two-shot: groups of `cluster` CTAs; block: one CTA a group
      n = per_sm * sms / (mode == kFusedBlock ? 1 : cluster);
    }
    if (n == 0) {
      (void)cudaGetLastError();  // not left for the next launch check to find
      n = 1;
    }
    best = std::min(best, n);
  }
  return std::max(1, best);
}

}  // namespace specsim::car::detail
