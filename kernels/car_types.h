#pragma once
// Custom all-reduce: the enums and limits shared by the public API and the kernels (C++17, so
// that nvcc compiles it whatever C++ standard CMake knows it supports).
#include <cstddef>
#include <cstdint>

#include "scenario/custom_ar_policy.h"

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
/// Element type; accumulation is always fp32.
enum class DType { BF16, FP16, FP32 };
/// How the ranks' memories are connected (selects thresholds, never correctness).
enum class Link { NVLink, PCIe };

}  // namespace specsim::car
