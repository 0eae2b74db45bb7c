#pragma once
// Custom all-reduce: the enums and limits shared by the public API and the kernels (C++17, so
// that nvcc compiles it whatever C++ standard CMake knows it supports).
#include <cstddef>
#include <cstdint>

namespace specsim::car {

/// Largest world size the kernels handle (flag arrays and pointer tables are sized by it).
inline constexpr int kMaxRanks = 8;
/// Smallest world size: a world of one has nothing to reduce.
inline constexpr int kMinRanks = 2;
/// Required alignment of input and output pointers (the aligned body uses 16-byte vectors).
inline constexpr std::size_t kAlignBytes = 16;
/// Default per-rank buffer: the largest tensor a communicator accepts (8 MiB).
inline constexpr std::size_t kDefaultMaxBytes = std::size_t{8} << 20;
/// Default bound on every spin-wait; a peer later than this is reported as absent.
inline constexpr std::uint64_t kDefaultTimeoutNs = 2'000'000'000;

/// Which kernel runs. Auto asks select_variant().
enum class Variant { Auto, OneShotPull, OneShotPush, TwoShot };
/// Element type; accumulation is always fp32.
enum class DType { BF16, FP16, FP32 };
/// How the ranks' memories are connected (selects thresholds, never correctness).
enum class Link { NVLink, PCIe };

}  // namespace specsim::car
