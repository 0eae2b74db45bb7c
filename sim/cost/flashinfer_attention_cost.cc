#include "cost/flashinfer_attention_cost.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

namespace {

constexpr const char* kFile = "kernels/flashinfer_attention.json";
constexpr std::array<const char*, kFlashInferTerms> kTermNames = {
    "fixed_us",  "fixed_us_tile16", "fixed_us_tile64",     "fixed_us_tile128",
    "us_per_mb", "us_per_gflop",    "us_per_padded_gflop", "us_per_token"};

double positive(const nlohmann::json& j, const std::string& key, const std::string& path) {
  const double v = sourced_number(j, key, path);
  if (!(v > 0)) throw InputError(path + ": " + key + " must be above 0", "models/" + std::string(kFile));
  return v;
}

// A kernel's block: "terms" {name: coefficient >= 0} of the names above, at least one. A bad file
// is refused by the first run that prices a FlashInfer op, with the file and field named.
FlashInferKernelPrice read_kernel(const nlohmann::json& j, const std::string& kernel, const std::string& path) {
  const std::string field = "models/" + std::string(kFile);
  if (!j.contains(kernel) || !j[kernel].is_object() || !j[kernel].contains("terms") || !j[kernel]["terms"].is_object())
    throw InputError(path + ": needs \"" + kernel + "\": {\"terms\": {...}}", field);
  FlashInferKernelPrice p;
  for (const auto& [name, value] : j[kernel]["terms"].items()) {
    const auto it = std::find(kTermNames.begin(), kTermNames.end(), name);
    if (it == kTermNames.end()) throw InputError(path + ": " + kernel + " has an unknown term '" + name + "'", field);
    if (!value.is_number() || value.get<double>() < 0 || !std::isfinite(value.get<double>()))
      throw InputError(path + ": " + kernel + "." + name + " must be a number >= 0", field);
    p.coef[static_cast<std::size_t>(it - kTermNames.begin())] = value.get<double>();
  }
  if (j[kernel]["terms"].empty()) throw InputError(path + ": " + kernel + " needs at least one term", field);
  return p;
}

FlashInferAttentionPrices read_prices() {
  const std::string path = models_dir() + "/" + kFile;
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object()) throw InputError(path + ": needs a JSON object", "models/" + std::string(kFile));
  FlashInferAttentionPrices p;
  p.reference_mem_bw_gbps = positive(j, "reference_mem_bw_gbps", path);
  p.reference_bf16_tflops = positive(j, "reference_bf16_tflops", path);
  p.prefill = read_kernel(j, "prefill", path);
  p.custom = read_kernel(j, "custom", path);
  p.decode = read_kernel(j, "decode", path);
  p.decode_tc = read_kernel(j, "decode_tc", path);
  return p;
}

}  // namespace

int flashinfer_query_tile(double requests, double tokens, double group) {
  const double packed = (tokens - requests + 1) * group;
  return packed > 64 ? 128 : packed > 16 ? 64 : 16;
}

const FlashInferAttentionPrices& flashinfer_attention_prices() {
  static const FlashInferAttentionPrices prices = read_prices();
  return prices;
}

namespace {

using Features = std::array<double, kFlashInferTerms>;

// The features (FlashInferTerm order) of a call of op's shape reading `bytes` and doing `flops` on
// `g`: the byte and FLOP terms scaled from the GPU the prices were measured on.
Features features(const Op& op, double bytes, double flops, const GpuProfile& g, const FlashInferAttentionPrices& p) {
  const double requests = std::max(1.0, op.n), group = std::max(1.0, op.k);
  const double q = std::max(1.0, op.m / requests);  // query tokens a request
  const int tile = flashinfer_query_tile(requests, op.m, group);
  const double padded = std::ceil(q * group / tile) * tile / (q * group);
  const double mem = p.reference_mem_bw_gbps / g.mem_bw_gbps, flop = p.reference_bf16_tflops / g.peak_bf16_tflops;
  return {1,
          tile == 16 ? 1.0 : 0.0,
          tile == 64 ? 1.0 : 0.0,
          tile == 128 ? 1.0 : 0.0,
          bytes / 1e6 * mem,
          flops / 1e9 * flop,
          flops / 1e9 * padded * flop,
          op.m};
}

double dot(const FlashInferKernelPrice& k, const Features& f) {
  double t = 0;
  for (std::size_t i = 0; i < f.size(); ++i) t += k.coef[i] * f[i];
  return t;
}

}  // namespace

double flashinfer_attention_us(const Op& op, const GpuProfile& g, double mask_factor) {
  const FlashInferAttentionPrices& p = flashinfer_attention_prices();
  if (op.attention_kernel == AttentionKernel::FlashInferMask) {
    // the pass's own bytes and FLOPs, from the extra op's (mask_factor - 1) x them
    if (mask_factor <= 1) return 0;
    const Features f = features(op, op.bytes / (mask_factor - 1), op.flops / (mask_factor - 1), g, p);
    return std::max(0.0, dot(p.custom, f) - dot(p.prefill, f));
  }
  const FlashInferKernelPrice* k = op.attention_kernel == AttentionKernel::FlashInferPrefill    ? &p.prefill
                                   : op.attention_kernel == AttentionKernel::FlashInferDecode   ? &p.decode
                                   : op.attention_kernel == AttentionKernel::FlashInferDecodeTc ? &p.decode_tc
                                                                                                : nullptr;
  return k ? std::max(g.kernel_min_us, dot(*k, features(op, op.bytes, op.flops, g, p))) : 0.0;
}

}  // namespace specsim
