#include "scenario/dtype.h"

#include "util/error.h"

namespace specsim {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::BF16: return "bf16";
    case DType::FP16: return "fp16";
    case DType::FP8: return "fp8";
    case DType::FP32: return "fp32";
  }
  return "bf16";
}

DType parse_dtype(std::string_view s, const std::string& where) {
  if (s == "bf16" || s == "bfloat16") return DType::BF16;
  if (s == "fp16" || s == "float16" || s == "half") return DType::FP16;
  if (s == "fp8" || s == "e4m3") return DType::FP8;
  if (s == "fp32" || s == "float32" || s == "float") return DType::FP32;
  throw InputError("unknown dtype '" + std::string(s) + "': use bf16, fp16, fp8 or fp32", where);
}

}  // namespace specsim
