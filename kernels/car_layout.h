#pragma once
// Internal to the custom all-reduce: the layout of a rank's shared region, the launch
// arguments, and the launcher the host code calls. Shared by car_comm.cc and the kernel files.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "car_types.h"

#if defined(__CUDACC__)
#define CAR_HD __host__ __device__
#else
#define CAR_HD
#endif

namespace specsim::car::detail {

/// Threads per block of every kernel.
inline constexpr int kThreads = 512;
/// Most threads per block of the flag-free kernels (Options::ll_threads is at most this).
inline constexpr int kLlMaxThreads = 256;
/// Most blocks per rank (flag arrays are sized by it).
inline constexpr int kMaxBlocks = 64;
/// Barriers per call: 0 = inputs staged/pushed, 1 = reduce-scatter done (two-shot only).
inline constexpr int kBarriers = 2;

// One rank's shared region (cudaMalloc'ed by its owner, mapped by every peer):
//   [kFlagsOff]  uint32 flags[kMaxBlocks][kBarriers][kMaxRanks]: peer p's block b writes the
//                epoch of the call into flags[b][barrier][p] of every rank (release, sys scope)
//   [kCtrlOff]   uint32 epoch (calls completed by this rank), uint32 done (blocks finished in
//                the running call): touched only by the owner
//   [kLlCallsOff] uint32 ll_calls[kMaxBlocks]: flag-free calls completed, as block b of this
//                rank knows it (every block holds the same count between calls): owner only
//   [kBcCallsOff] uint32 bc_calls[kMaxBlocks]: one-shot-ll-bcast calls completed, kept as
//                ll_calls but counted apart (its slots rotate by 3, not 2); then
//                uint32 bc_len[3]: vectors written into bcast slot s by the call that last wrote
//                it (what the owner empties): owner only
//   [kDataOff]   in slots (2 parities x M), tmp (M, two-shot), recv (2 parities x world x M),
//                ll (2 parities x world x L, flag-free variants), bcast (3 x L, one-shot-ll-bcast:
//                the owner's one copy of its input, slot = call count mod 3); ll and bcast start
//                filled with kLlEmptyByte
// M = max_bytes rounded up to 256, L = min(max_bytes, kLlMaxBytes) rounded up to 256. Everything
// else starts zeroed.
inline constexpr std::size_t kFlagsOff = 0;
inline constexpr std::size_t kFlagsBytes = sizeof(std::uint32_t) * kMaxBlocks * kBarriers * kMaxRanks;
inline constexpr std::size_t kCtrlOff = kFlagsBytes;
inline constexpr std::size_t kLlCallsOff = kCtrlOff + 64;
inline constexpr std::size_t kBcCallsOff = kLlCallsOff + kMaxBlocks * sizeof(std::uint32_t);
inline constexpr std::size_t kBcLenOff = kBcCallsOff + kMaxBlocks * sizeof(std::uint32_t);
/// Slots of one-shot-ll-bcast's area (the rotation needs three: car_ll_bcast.cu).
inline constexpr int kBcSlots = 3;
inline constexpr std::size_t kDataOff = 64 * 1024;
static_assert(kCtrlOff + 2 * sizeof(std::uint32_t) <= kLlCallsOff, "control words overlap");
static_assert(kBcLenOff + kBcSlots * sizeof(std::uint32_t) <= kDataOff, "control words overlap data");
static_assert(kDataOff % 256 == 0, "data must start 256-byte aligned");

/// Byte of an empty flag-free receive slot: every element of every dtype reads as the reserved
/// value (bf16/fp16 0xffff, fp32 0xffffffff: NaNs that no arithmetic produces). Senders replace
/// that value in their inputs by the canonical NaN, which reduces to the same output.
inline constexpr int kLlEmptyByte = 0xff;
/// Error-word "barrier" of a flag-free variant that waited for a peer's data.
inline constexpr int kLlWait = 2;
/// ... that waited for the reduced values of a slice from the rank that owns it (two-shot round 2):
/// the owner may be absent, or itself waiting for a missing rank.
inline constexpr int kOwnerWait = 3;

/// Slot stride: max_bytes rounded up to 256 bytes.
CAR_HD constexpr std::size_t slot_bytes(std::size_t max_bytes) { return (max_bytes + 255) / 256 * 256; }
/// Flag-free slot stride: min(max_bytes, kLlMaxBytes) rounded up to 256 bytes.
CAR_HD constexpr std::size_t ll_slot_bytes(std::size_t max_bytes) {
  return slot_bytes(max_bytes < car_policy::kLlMaxBytes ? max_bytes : car_policy::kLlMaxBytes);
}
CAR_HD constexpr std::size_t in_off(std::size_t m, int parity) { return kDataOff + m * parity; }
CAR_HD constexpr std::size_t tmp_off(std::size_t m) { return kDataOff + 2 * m; }
CAR_HD constexpr std::size_t recv_off(std::size_t m, int world, int parity, int src) {
  return kDataOff + 3 * m + m * (static_cast<std::size_t>(parity) * world + src);
}
/// Flag-free slot [parity][idx] (idx: the sender for one-shot-ll, the reader for -pull).
CAR_HD constexpr std::size_t ll_off(std::size_t m, std::size_t l, int world, int parity, int idx) {
  return recv_off(m, world, 2, 0) + l * (static_cast<std::size_t>(parity) * world + idx);
}
/// one-shot-ll-bcast's slot s (0..kBcSlots-1): after the flag-free area.
CAR_HD constexpr std::size_t bc_off(std::size_t m, std::size_t l, int world, int s) {
  return ll_off(m, l, world, 2, 0) + l * static_cast<std::size_t>(s);
}
CAR_HD constexpr std::size_t region_size(int world, std::size_t max_bytes) {
  return bc_off(slot_bytes(max_bytes), ll_slot_bytes(max_bytes), world, kBcSlots);
}
/// Bytes of the flag-free and bcast areas, which end the region and start filled with kLlEmptyByte.
CAR_HD constexpr std::size_t ll_area_bytes(int world, std::size_t max_bytes) {
  return (2 * static_cast<std::size_t>(world) + kBcSlots) * ll_slot_bytes(max_bytes);
}

/// What one rank's blocks need: every rank's region as mapped here, its error word.
struct RankPtrs {
  char* base[kMaxRanks];    ///< region of rank q as this process maps it
  unsigned long long* err;  ///< host-mapped error word of this rank
  const void* in;           ///< this rank's input
  void* out;                ///< this rank's output
  int rank;                 ///< this rank's index
  int absent;               ///< test hook: 1 = these blocks return at once
};

/// Arguments of one launch: `ranks` ranks on blockIdx.y (1 except in virtual mode).
struct LaunchArgs {
  RankPtrs r[kMaxRanks];
  std::size_t count;         ///< elements per rank
  std::size_t slot;          ///< slot stride M in bytes
  std::size_t ll_slot;       ///< flag-free slot stride L in bytes
  std::uint64_t timeout_ns;  ///< bound of every spin
  int world;                 ///< world size
  int ranks;                 ///< ranks driven by this launch (gridDim.y)
  int blocks;                ///< blocks per rank (gridDim.x)
  int threads;               ///< threads per block (kThreads, or Options::ll_threads for flag-free)
  int rank_fastest;          ///< flag-free kernels: 1 = grid (ranks, blocks) (set by launch_flag_free)
};
static_assert(sizeof(LaunchArgs) < 4000, "kernel parameters must stay under 4 KB");

// Error word: bit 63 valid | 56..59 waiting rank | 52..55 missing rank | 48..51 barrier (or kLlWait, kOwnerWait) |
// 40..47 block | 0..31 epoch. Written once by the first block that times out.
inline constexpr unsigned long long kErrValid = 1ull << 63;
CAR_HD constexpr unsigned long long encode_error(int rank, int missing, int barrier, int block, std::uint32_t epoch) {
  return kErrValid | (static_cast<unsigned long long>(rank & 15) << 56) |
         (static_cast<unsigned long long>(missing & 15) << 52) | (static_cast<unsigned long long>(barrier & 15) << 48) |
         (static_cast<unsigned long long>(block & 255) << 40) | epoch;
}

/// Launches the kernel for (variant, dtype) with grid (blocks, ranks). Returns the launch's
/// cudaError_t. `variant` must be concrete (not Auto).
cudaError_t launch(const LaunchArgs& args, Variant variant, DType dtype, cudaStream_t stream);
/// Max resident blocks per SM of the heaviest kernel (for co-residency caps).
int max_blocks_per_sm();

}  // namespace specsim::car::detail
