#pragma once
// Element types of weights, activations and the KV cache, with the bytes each element moves
// (a 4-bit format's scales included).
#include <string>
#include <string_view>

namespace specsim {

/// FP8: e4m3, DeepSeek's 128x128 block scales (their 4 B per 16384 weights left out). INT4:
/// W4A16 as compressed-tensors packs it (Kimi-K2-Thinking: symmetric int4, one bf16 scale per
/// group of 32, activations bf16). NVFP4: e2m1 with one fp8 scale per 16. MXFP4: e2m1 with one
/// e8m0 scale per 32 (gpt-oss). Sources: docs/sources.md#S-weight-formats.
enum class DType { BF16, FP16, FP8, FP32, INT4, NVFP4, MXFP4 };

/// Bytes per element, scales included.
constexpr double dtype_bytes(DType d) {
  switch (d) {
    case DType::FP8: return 1.0;
    case DType::BF16:
    case DType::FP16: return 2.0;
    case DType::FP32: return 4.0;
    case DType::INT4: return 0.5 + 2.0 / 32;   // 4 bits + a bf16 scale per 32
    case DType::NVFP4: return 0.5 + 1.0 / 16;  // 4 bits + an fp8 scale per 16
    case DType::MXFP4: return 0.5 + 1.0 / 32;  // 4 bits + an e8m0 scale per 32
  }
  return 2.0;
}

/// Whether weights of this type are 4-bit.
constexpr bool is_4bit(DType d) { return d == DType::INT4 || d == DType::NVFP4 || d == DType::MXFP4; }

/// Lower-case name: bf16, fp16, fp8, fp32, int4, nvfp4, mxfp4.
std::string_view dtype_name(DType d);

/// Parses bf16|fp16|fp8|fp32|int4|nvfp4|mxfp4 (also bfloat16, float16, float32, e4m3, w4a16);
/// InputError naming `where`.
DType parse_dtype(std::string_view s, const std::string& where);

/// The KV cache's element bytes for SGLang's/vLLM's --kv-cache-dtype: auto (the model's 16-bit
/// dtype), bf16/bfloat16/fp16, fp8/fp8_e4m3/fp8_e5m2 (1 byte; the cache's per-tensor scale left
/// out). InputError naming `where` for anything else.
double kv_cache_bytes(std::string_view s, const std::string& where);
/// Whether kv_cache_bytes prices this KV-cache dtype (auto, 16-bit or fp8).
bool kv_cache_dtype_modelled(std::string_view s);

}  // namespace specsim
