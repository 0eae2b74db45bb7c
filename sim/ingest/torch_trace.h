#pragma once
// torch.profiler Chrome-trace JSON (what SGLang's --profile writes): GPU kernels classified as
// NCCL all-reduce, other NCCL, custom all-reduce, GEMM, attention or other, with time per kind
// per step (ProfilerStep#N markers, or a step count the user gives).
#include <array>
#include <map>
#include <string>
#include <string_view>

namespace specsim::ingest {

enum class KernelKind { NcclAllReduce, NcclOther, CustomAllReduce, Gemm, Attention, Other };
constexpr int kNumKernelKinds = 6;
std::string_view kernel_kind_name(KernelKind k);

/// By name, first match wins: custom all-reduce (cross_device_reduce_1stage/2stage, car_*,
/// custom_allreduce), NCCL (nccl*; AllReduce or other), GEMM (any "gemm", fused_moe), other
/// (FlashInfer norm/activation, rotary, reshape_and_cache: they say "flash"), attention (flash, mla,
/// attention, attn, fmha, pagedkv; before the next rule since FlashAttention names carry cutlass
/// types), GEMM (cutlass, sm90_xmma, nvjet, cublas), else other.
KernelKind classify_kernel(std::string_view name);

/// One kernel name's events: what a predicted trace (run --trace) is matched against by name.
struct KernelNameStat {
  KernelKind kind = KernelKind::Other;
  long long count = 0;
  double us = 0;
};

struct TorchTraceSummary {
  std::array<double, kNumKernelKinds> us{};  ///< summed kernel time per kind over the trace
  std::array<long long, kNumKernelKinds> count{};
  int steps = 0;  ///< ProfilerStep#N markers (0: none)
  long long events = 0, kernels = 0, memcpy_memset = 0;
  long long skipped_known = 0;  ///< CPU ops, runtime calls, annotations, flows, metadata: not used
  long long unknown = 0;        ///< events of a category this parser does not know: skipped
  /// Every GPU kernel name seen.
  std::map<std::string, KernelNameStat> by_name;
  double mean_nccl_allreduce_us() const;
};

/// Parses FILE's text; InputError `what (FILE:LINE)` on malformed JSON, a kernel event without
/// name/ts/dur, or a trace without GPU kernels.
TorchTraceSummary parse_torch_trace(const std::string& text, const std::string& file);

}  // namespace specsim::ingest
