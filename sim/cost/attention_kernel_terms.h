#pragma once
// A serving stack's attention kernel priced from its measured times on one GPU: a sum of named
// terms, a coefficient times a feature of the call, read from a models/kernels/ JSON file. Shared
// by FlashInfer's kernels (flashinfer_attention_cost.h) and FA3's (fa3_attention_cost.h).
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "plan/op.h"
#include "scenario/hardware.h"

namespace specsim {

/// The features a kernel's terms multiply (the JSON names its coefficients so).
enum class AttentionTerm {
  FixedUs,        ///< 1
  FixedUsTile16,  ///< 1 where FlashInfer's CUDA-graph plan picks a 16-row query tile
  FixedUsTile64,
  FixedUsTile128,
  UsPerMb,           ///< KV bytes read, MB (scaled by the reference GPU's HBM bandwidth over the GPU's)
  UsPerGflop,        ///< QK and PV GFLOP (scaled by the reference GPU's bf16 peak over the GPU's)
  UsPerPaddedGflop,  ///< the same over whole query tiles (the rows a tile pads to)
  UsPerToken,        ///< query tokens of the call
};
inline constexpr int kAttentionTerms = static_cast<int>(AttentionTerm::UsPerToken) + 1;

/// One kernel's coefficients (0 where the kernel has no such term).
struct AttentionKernelPrice {
  std::array<double, kAttentionTerms> coef{};
};

/// The GPU a file's kernels were measured on, which the byte and FLOP terms scale from.
struct AttentionReference {
  double mem_bw_gbps = 0, bf16_tflops = 0;
};

/// `file` (under models/) read as a JSON object with its reference GPU; a one-line InputError
/// naming the file and field where it is not one.
nlohmann::json read_attention_file(const std::string& file, AttentionReference& ref);

/// `kernel`'s block of a file: "terms" {name: coefficient >= 0}, at least one, names as above.
AttentionKernelPrice read_attention_kernel(const nlohmann::json& j, const std::string& kernel, const std::string& file);

/// FlashInfer's FA2 query tile (rows) for a CUDA-graph plan (here because the tile terms above
/// read it) of `requests` requests with `tokens`
/// query tokens in all and `group` query heads a KV head (FA2DetermineCtaTileQ on the largest
/// packed query length the plan allows for: (tokens - requests + 1) x group).
int flashinfer_query_tile(double requests, double tokens, double group);

using AttentionFeatures = std::array<double, kAttentionTerms>;

/// The features (AttentionTerm order) of a call of op's shape (op.m query tokens, op.n requests,
/// op.k query heads a KV head) reading `bytes` and doing `flops` on `g`.
AttentionFeatures attention_features(const Op& op, double bytes, double flops, const GpuProfile& g,
                                     const AttentionReference& ref);

/// A kernel's time for those features, us.
double attention_kernel_us(const AttentionKernelPrice& k, const AttentionFeatures& f);

}  // namespace specsim
