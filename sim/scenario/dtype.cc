#include "scenario/dtype.h"

#include "util/error.h"

namespace specsim {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::BF16: return "bf16";
    case DType::FP16: return "fp16";
    case DType::FP8: return "fp8";
    case DType::FP32: return "fp32";
    case DType::INT4: return "int4";
    case DType::NVFP4: return "nvfp4";
    case DType::MXFP4: return "mxfp4";
  }
  return "bf16";
}

DType parse_dtype(std::string_view s, const std::string& where) {
  if (s == "bf16" || s == "bfloat16") return DType::BF16;
  if (s == "fp16" || s == "float16" || s == "half") return DType::FP16;
  if (s == "fp8" || s == "e4m3") return DType::FP8;
  if (s == "fp32" || s == "float32" || s == "float") return DType::FP32;
  if (s == "int4" || s == "w4a16") return DType::INT4;
  if (s == "nvfp4") return DType::NVFP4;
  if (s == "mxfp4") return DType::MXFP4;
  throw InputError("unknown dtype '" + std::string(s) + "': use bf16, fp16, fp8, fp32, int4, nvfp4 or mxfp4", where);
}

bool kv_cache_dtype_modelled(std::string_view s) {
  return s == "auto" || s == "bf16" || s == "bfloat16" || s == "fp16" || s == "float16" || s == "fp8" ||
         s == "fp8_e4m3" || s == "fp8_e5m2";
}

double kv_cache_bytes(std::string_view s, const std::string& where) {
  if (s == "auto" || s == "bf16" || s == "bfloat16" || s == "fp16" || s == "float16") return 2.0;
  if (s == "fp8" || s == "fp8_e4m3" || s == "fp8_e5m2") return 1.0;
  if (s == "fp4_e2m1")
    throw InputError(
        "not modelled: an fp4 KV cache changes the attention's bytes and its dequantization; use auto "
        "or fp8_e4m3",
        where);
  throw InputError("unknown KV-cache dtype '" + std::string(s) + "': use auto, bf16, fp8_e4m3 or fp8_e5m2", where);
}

}  // namespace specsim
