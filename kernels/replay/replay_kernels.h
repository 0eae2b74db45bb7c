#pragma once
// The replay's own kernels (host launchers; no CUDA headers needed to call them): random fills,
// a timed spin that keeps the host ahead of the GPU, a memory kernel moving a given byte count,
// and a split-KV tensor-core attention kernel that reads a KV buffer from memory once.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace specsim::replay {

/// Row width of the attention kernel's KV rows, in bf16 elements.
constexpr int kAttnRowElems = 128;
/// KV rows one warp handles per step (one tensor-core tile).
constexpr int kAttnChunkRows = 16;

/// Fills `n` bf16 (or fp8 e4m3 when `fp8`) elements with uniform random values in [-scale, scale).
void fill_random(void* p, std::size_t n, bool fp8, float scale, std::uint64_t seed, cudaStream_t s);

/// Busy-waits `ns` nanoseconds on the GPU (globaltimer), so the host can queue work behind it.
void spin(std::uint64_t ns, cudaStream_t s);

/// Reads `vec16` 16-byte vectors from `src` and writes as many to `dst` (a norm/elementwise op).
void stream_bytes(const void* src, void* dst, std::size_t vec16, int sms, cudaStream_t s);

/// Query tiles one CTA holds in shared memory at most; more form further query groups, each of
/// which reads the KV again (as a real kernel's query blocks do).
constexpr int kAttnMaxQTiles = 24;

/// A planned attention launch: the split-KV grid for one shape on the current device.
struct AttentionLaunch {
  std::size_t chunks = 0;  ///< 16-row KV chunks
  int qtiles = 1;          ///< 16-row query tiles
  int group_tiles = 1;     ///< query tiles per group
  int groups = 1;          ///< query groups (grid x)
  int ctas = 0;            ///< KV splits: CTAs per group (grid y), each 4 warps
  std::size_t smem = 0;    ///< dynamic shared memory per CTA, bytes
};

/// Sizes the launch for `chunks` x 16 KV rows of 128 bf16 against `qtiles` x 16 query rows on the
/// current device (sets the kernel's shared-memory limit). Throws when the shape is empty.
AttentionLaunch plan_attention(std::size_t chunks, int qtiles);

/// Floats `attention` writes (one 16x16 partial per warp).
std::size_t attention_out_floats(const AttentionLaunch& l);

/// Split-KV attention pass (flash-decoding): for each KV chunk and each query tile, S = Q Kc^T,
/// P = exp(S/16), O += P Vc on tensor cores; each chunk's rows serve as both K and V. The KV is
/// read from memory once: the CTAs of further query groups run beside the first and find it in L2. `q` holds l.qtiles x
/// 16 x 128 bf16, `kv` l.chunks x 16 x 128 bf16, `out` attention_out_floats(l) floats: per warp, the sum of its O
/// partials over the eight 16-column blocks (what the correctness test checks against a CPU reference).
void attention(const void* q, const void* kv, const AttentionLaunch& l, float* out, cudaStream_t s);

}  // namespace specsim::replay
