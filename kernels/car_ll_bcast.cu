// The flag-free one-shot with one copy per owner of the custom all-reduce: one-shot-ll-bcast;
// bf16, fp16, fp32. Helpers: car_ll_device.cuh, car_device.cuh; layout of the shared regions
// (its three slots and its own call count): car_layout.h; the launch (grid, programmatic dependent
// launch): car_launch.cu.
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
    // all pending peers' loads in flight at once, then the checks (relaxed.sys polls: see above)
    const auto peer_copy = [&](int q) { return reinterpret_cast<const uint4*>(me.base[q] + cur_off) + i; };
    if (!poll_peers<T, kR>(v, peer_copy, world, me, &s_failed, a.timeout_ns, static_cast<int>(blk), call))
      break;                                 // gave up: the error word says why; the output is not written
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
  // 8 virtual ranks (3.22 against 2.83 us at 42 KB; traces/experiments/README.md)
  if (threadIdx.x == 0) {
    store_call_count(calls, blk, nblk, call, 0, 1);
    if (blk == 0) lens[cur] = nvec;  // read by the next call (kernel order), rewritten three calls on
  }
}

}  // namespace

/// one-shot-ll-bcast's kernel for a world: 2 has its own instantiation (kWorld), any other world
/// (or 0) the any-world one.
template <typename T>
Kernel bcast_for(int world) {
  switch (world) {
    case 2: return bcast_kernel<T, 2>;
    default: return bcast_kernel<T, 0>;
  }
}

template Kernel bcast_for<__nv_bfloat16>(int);
template Kernel bcast_for<__half>(int);
template Kernel bcast_for<float>(int);

}  // namespace specsim::car::detail
