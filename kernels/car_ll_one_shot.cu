// The flag-free one-shots of the custom all-reduce: one-shot-ll (push) and one-shot-ll-pull; bf16,
// fp16, fp32. Their packets, slots, parity and call count are shared with two-shot-ll
// (car_ll_two_shot.cu); one-shot-ll-bcast (car_ll_bcast.cu) keeps its own. Helpers:
// car_ll_device.cuh, car_device.cuh; layout of the shared regions: car_layout.h; the launch
// (grid, programmatic dependent launch): car_launch.cu.
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

/// Flag-free one-shot; kPull selects one-shot-ll-pull. See the top of this file.
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
  // 42 KB: 0.5 us faster than 0, 1, ..., world-1; traces/experiments/README.md). 2 ranks: the one peer.
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
    // all pending peers' loads in flight at once, then the checks; s_failed (another thread of the
    // block gave up) read after every failed pass: reading it only every kTimerEvery passes
    // measured slower (8 virtual ranks, 42 KB: 4.08 against 3.66 us; 2 GPUs 0.1 us slower at 42-114 KB)
    if (!poll_peers<T, kR>(
            v, [&](int q) { return in_slot(q) + i; }, world, me, &s_failed, a.timeout_ns, static_cast<int>(blk), call))
      break;  // gave up: the error word says why; the output is not written
#pragma unroll
    for (int q = 0; q < kR; ++q)
      if (q < world && q != me.rank) in_slot(q)[i] = empty_vec();
    store_output<T>(me.out, i, a.count, reduce_regs<T, kR>(v, own, me.rank, world));
  }
  store_call_count(calls, blk, nblk, call, threadIdx.x, blockDim.x);
}

}  // namespace

/// The flag-free kernel for a world: 2 has its own instantiation (kWorld), any other world (or 0)
/// the any-world one.
template <typename T, bool kPull>
Kernel flag_free_for(int world) {
  switch (world) {
    case 2: return flag_free_kernel<T, kPull, 2>;
    default: return flag_free_kernel<T, kPull, 0>;
  }
}

template Kernel flag_free_for<__nv_bfloat16, false>(int);
template Kernel flag_free_for<__nv_bfloat16, true>(int);
template Kernel flag_free_for<__half, false>(int);
template Kernel flag_free_for<__half, true>(int);
template Kernel flag_free_for<float, false>(int);
template Kernel flag_free_for<float, true>(int);

}  // namespace specsim::car::detail
