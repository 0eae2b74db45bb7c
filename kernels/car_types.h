#pragma once
// Custom all-reduce: the enums and limits shared by the public API and the kernels (C++17, so
// that nvcc compiles it whatever C++ standard CMake knows it supports).
#include <cstddef>
#include <cstdint>

#include "scenario/custom_ar_policy.h"
#include "scenario/dtype.h"

namespace specsim::car {

/// World-size limits and the default buffer: the policy's, shared with the engine.
inline constexpr int kMaxRanks = car_policy::kMaxRanks;
inline constexpr int kMinRanks = car_policy::kMinRanks;
/// Required alignment of input and output pointers (the aligned body uses 16-byte vectors).
inline constexpr std::size_t kAlignBytes = 16;
/// Default per-rank buffer: the largest tensor a communicator accepts.
inline constexpr std::size_t kDefaultMaxBytes = car_policy::kMaxBytes;
/// Default bound on every spin-wait; a peer later than this is reported as absent.
inline constexpr std::uint64_t kDefaultTimeoutNs = 2'000'000'000;

/// Which kernel runs (the policy's enum, shared with the engine). Auto asks select_variant().
using Variant = car_policy::Variant;
/// Element type: the engine's (scenario/dtype.h: dtype_bytes, dtype_name). The kernels run bf16,
/// fp16 and fp32 (is_kernel_dtype), accumulating in fp32; fp8 is refused before any launch.
using DType = specsim::DType;
/// True for the element types the kernels are built for: bf16, fp16, fp32.
constexpr bool is_kernel_dtype(DType d) {
  switch (d) {
    case DType::BF16:
    case DType::FP16:
    case DType::FP32: return true;
    case DType::FP8: return false;  // the engine's weight type only: no fp8 kernels
    default: return false;          // a value outside the enum
  }
}
/// Bytes per element as a size, for byte arithmetic (specsim::dtype_bytes, cast).
constexpr std::size_t elem_bytes(DType d) { return static_cast<std::size_t>(specsim::dtype_bytes(d)); }
/// How the ranks' memories are connected (selects thresholds, never correctness).
enum class Link { NVLink, PCIe };

}  // namespace specsim::car
