#pragma once
// Element types of weights and activations.
#include <string>
#include <string_view>

namespace specsim {

enum class DType { BF16, FP16, FP8, FP32 };

/// Bytes per element.
constexpr double dtype_bytes(DType d) {
  switch (d) {
    case DType::FP8: return 1.0;
    case DType::BF16:
    case DType::FP16: return 2.0;
    case DType::FP32: return 4.0;
  }
  return 2.0;
}

/// Lower-case name: bf16, fp16, fp8, fp32.
std::string_view dtype_name(DType d);

/// Parses bf16|fp16|fp8|fp32 (also bfloat16, float16, float32); InputError naming `where`.
DType parse_dtype(std::string_view s, const std::string& where);

}  // namespace specsim
