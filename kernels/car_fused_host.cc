// Host side of the fused all-reduce + residual add + RMSNorm: the refusal logic and the block
// shape (no CUDA calls, unit-tested without a GPU), and the separate add+RMSNorm launch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "car_fused_args.h"
#include "car_kernels.h"
#include "custom_allreduce.h"

namespace specsim::car {

namespace {

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return buf;
}

struct Buf {
  const char* name;
  const void* p;
  std::size_t bytes;
  bool written;
};

bool overlap(const Buf& a, const Buf& b) {
  const auto x = reinterpret_cast<std::uintptr_t>(a.p), y = reinterpret_cast<std::uintptr_t>(b.p);
  return x < y + b.bytes && y < x + a.bytes;
}

/// The in-place pairs a call may use: the norm output over the input, the new residual over the old.
bool allowed_alias(const Buf& a, const Buf& b) {
  const std::string x = a.name, y = b.name;
  if (a.p != b.p) return false;
  return (x == "in" && y == "norm_out") || (x == "norm_out" && y == "in") ||
         (x == "residual_in" && y == "residual_out") || (x == "residual_out" && y == "residual_in");
}

}  // namespace

int fused_cluster(std::size_t hidden) {
  const std::size_t vpr = std::max<std::size_t>(hidden / 8, 1);
  int c = 1;
  while (c < detail::kFusedMaxCluster && (vpr + c - 1) / c > static_cast<std::size_t>(detail::kFusedCtaVectors)) c *= 2;
  return c;
}

int fused_threads(std::size_t hidden) {
  const std::size_t vpr = std::max<std::size_t>(hidden / 8, 1);
  const auto c = static_cast<std::size_t>(fused_cluster(hidden));
  const std::size_t slice = (vpr + c - 1) / c;  // vectors a CTA (the last may have fewer)
  const std::size_t max_t = detail::kFusedMaxThreads;
  const std::size_t held = (slice + max_t - 1) / max_t;
  const std::size_t per = (slice + held - 1) / held;  // balanced: every thread holds `held` or one less
  return static_cast<int>(std::min(max_t, (per + 31) / 32 * 32));
}

std::string_view to_string(FusedVariant v) {
  switch (v) {
    case FusedVariant::Cluster: return "cluster";
    case FusedVariant::ClusterPush: return "cluster-push";
    case FusedVariant::Block: return "block";
    case FusedVariant::Split: return "split";
    case FusedVariant::TwoShot: return "two-shot";
    case FusedVariant::Auto: return "auto";
  }
  return "?";
}

std::optional<FusedVariant> parse_fused_variant(std::string_view name) {
  for (FusedVariant v : {FusedVariant::Cluster, FusedVariant::ClusterPush, FusedVariant::Block, FusedVariant::Split,
                         FusedVariant::TwoShot, FusedVariant::Auto})
    if (name == to_string(v)) return v;
  return std::nullopt;
}

FusedVariant resolve_fused_variant(FusedVariant v, std::size_t tokens) {
  if (v != FusedVariant::Auto) return v;
  return tokens >= kFusedTwoShotMinTokens ? FusedVariant::TwoShot : FusedVariant::Split;
}

int fused_cta_threads(FusedVariant v, std::size_t hidden) {
  return fused_threads(hidden) * (v == FusedVariant::Block ? fused_cluster(hidden) : 1);
}

std::optional<std::string> fused_variant_refuse_reason(FusedVariant v, std::size_t hidden) {
  if (v == FusedVariant::Block && fused_cta_threads(v, hidden) > detail::kFusedBlockMaxThreads)
    return "fused variant block needs " + std::to_string(fused_cta_threads(v, hidden)) +
           " threads in one CTA for hidden " + std::to_string(hidden) + " (at most " +
           std::to_string(detail::kFusedBlockMaxThreads) + ": hidden up to 8192); use cluster, cluster-push or split";
  return std::nullopt;
}

namespace {
/// What fused_refuse_reason checks; `fused` false (the separate kernel): no world, no buffer caps.
std::optional<std::string> refuse(const FusedNormIo& io, const FusedNormShape& s, int world, std::size_t max_bytes,
                                  bool fused) {
  if (fused && (world < kMinRanks || world > kMaxRanks))
    return "world size " + std::to_string(world) + " is outside the supported 2..8";
  if (s.dtype != DType::BF16 && s.dtype != DType::FP16)
    return "dtype " + std::string(specsim::dtype_name(s.dtype)) +
           " is not supported by the fused all-reduce + RMSNorm: it runs bf16 and fp16";
  if (s.tokens == 0) return "tokens is 0: an empty call is refused rather than skipped";
  if (s.hidden == 0 || s.hidden % 8 != 0)
    return "hidden size " + std::to_string(s.hidden) + " is not a positive multiple of 8 (16-byte vectors a row)";
  if (s.hidden > kFusedMaxHidden)
    return "hidden size " + std::to_string(s.hidden) + " exceeds the fused kernel's " +
           std::to_string(kFusedMaxHidden) + " (8 CTAs a row of 256 threads); use allreduce + add_rmsnorm";
  if (s.tokens > std::numeric_limits<std::size_t>::max() / s.hidden / 2)
    return "tokens x hidden overflows the byte size";
  const std::size_t bytes = s.tokens * s.hidden * elem_bytes(s.dtype);
  if (fused && bytes > max_bytes)
    return "message of " + std::to_string(bytes) + " bytes exceeds the communicator's buffer of " +
           std::to_string(max_bytes) + " bytes (Options::max_bytes)";
  if (fused && bytes > car_policy::kLlMaxBytes)
    return "message of " + std::to_string(bytes) + " bytes exceeds the " + std::to_string(car_policy::kLlMaxBytes) +
           " bytes the fused kernel carries (flag-free slots); use allreduce + add_rmsnorm";
  if (!std::isfinite(s.eps) || s.eps < 0) return "eps must be finite and >= 0";
  if (io.quant_out != nullptr && (!std::isfinite(s.quant_scale) || s.quant_scale <= 0))
    return "quant_scale must be finite and > 0 when quant_out is set";
  const std::size_t row_bytes = s.hidden * elem_bytes(s.dtype);
  const std::vector<Buf> bufs = {{"in", io.in, bytes, false},
                                 {"residual_in", io.residual_in, bytes, false},
                                 {"residual_out", io.residual_out, bytes, true},
                                 {"weight", io.weight, row_bytes, false},
                                 {"norm_out", io.norm_out, bytes, true},
                                 {"quant_out", io.quant_out, s.tokens * s.hidden, true}};
  for (const Buf& b : bufs) {
    if (b.p == nullptr) {
      if (std::string(b.name) == "quant_out") continue;  // optional
      return std::string("null ") + b.name + " pointer";
    }
    const std::size_t align = std::string(b.name) == "quant_out" ? 8 : kAlignBytes;
    if (reinterpret_cast<std::uintptr_t>(b.p) % align != 0)
      return std::string(b.name) + " pointer " + hex(b.p) + " is not " + std::to_string(align) + "-byte aligned";
  }
  for (std::size_t x = 0; x < bufs.size(); ++x)
    for (std::size_t y = x + 1; y < bufs.size(); ++y) {
      const Buf &a = bufs[x], &b = bufs[y];
      if (a.p == nullptr || b.p == nullptr || !(a.written || b.written) || !overlap(a, b) || allowed_alias(a, b))
        continue;
      return std::string(a.name) + " and " + b.name +
             " overlap (in place allows only norm_out == in and residual_out == residual_in)";
    }
  return std::nullopt;
}
}  // namespace

std::optional<std::string> fused_refuse_reason(const FusedNormIo& io, const FusedNormShape& s, int world,
                                               std::size_t max_bytes) {
  return refuse(io, s, world, max_bytes, true);
}

void add_rmsnorm(std::span<const FusedNormIo> io, const FusedNormShape& s, cudaStream_t stream, FusedVariant v) {
  if (io.empty() || io.size() > static_cast<std::size_t>(kMaxRanks))
    throw std::runtime_error("add_rmsnorm refused: 1.." + std::to_string(kMaxRanks) + " ranks' buffers, got " +
                             std::to_string(io.size()));
  detail::FusedLaunchArgs a{};
  for (std::size_t r = 0; r < io.size(); ++r) {
    if (auto why = refuse(io[r], s, 0, 0, false))
      throw std::runtime_error("add_rmsnorm refused: " + *why + " (entry " + std::to_string(r) + ")");
    a.base.r[r].in = io[r].in;
    a.base.r[r].out = io[r].norm_out;
    a.f[r] = {io[r].residual_in, io[r].residual_out, io[r].weight, io[r].quant_out, nullptr};
  }
  // the cluster kernel for the cluster variants, else one CTA a row (its thread groups the CTAs)
  const bool one_cta = !fused_clustered(v);
  if (auto why = fused_variant_refuse_reason(one_cta ? FusedVariant::Block : v, s.hidden))
    throw std::runtime_error("add_rmsnorm refused: " + *why);
  a.base.ranks = static_cast<int>(io.size());
  a.base.threads = fused_cta_threads(one_cta ? FusedVariant::Block : FusedVariant::Cluster, s.hidden);
  a.cluster = fused_cluster(s.hidden);
  a.mode = one_cta ? detail::kFusedBlock : detail::kFusedCluster;
  a.tokens = s.tokens;
  a.hidden = s.hidden;
  a.eps = s.eps;
  a.quant_inv_scale = 1.0f / s.quant_scale;
  const cudaError_t e = s.dtype == DType::BF16 ? detail::launch_add_rmsnorm<__nv_bfloat16>(a, stream)
                                               : detail::launch_add_rmsnorm<__half>(a, stream);
  if (e != cudaSuccess) throw std::runtime_error(std::string("add_rmsnorm launch: ") + cudaGetErrorString(e));
}

}  // namespace specsim::car
