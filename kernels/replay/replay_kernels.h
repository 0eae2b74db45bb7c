#pragma once
// The replay's own kernels (host launchers; no CUDA headers needed to call them): random fills,
// a timed spin that keeps the host ahead of the GPU, a memory kernel moving a given byte count,
// and a tensor-core attention kernel that streams a KV buffer once.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

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

/// Attention-like pass over `chunks` x 16 KV rows of 128 bf16: for each chunk and each of `qtiles`
/// 16-row query tiles, S = Q Kc^T then O += bf16(S) Vc on tensor cores. Reads the KV once.
/// `q` holds qtiles x 16 x 128 bf16; `out` holds `warps` x 256 floats.
void attention(const void* q, const void* kv, std::size_t chunks, int qtiles, float* out, int warps, cudaStream_t s);

}  // namespace specsim::replay
