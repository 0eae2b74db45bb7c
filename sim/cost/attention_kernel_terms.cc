#include "cost/attention_kernel_terms.h"

#include <algorithm>
#include <cmath>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

namespace {

// In AttentionTerm's order: the JSON's name of each term.
constexpr std::array<const char*, kAttentionTerms> kAttentionTermNames = {
    "fixed_us",  "fixed_us_tile16", "fixed_us_tile64",     "fixed_us_tile128",
    "us_per_mb", "us_per_gflop",    "us_per_padded_gflop", "us_per_token"};

double positive_reference(const nlohmann::json& j, const std::string& key, const std::string& path,
                          const std::string& file) {
  const double v = sourced_number(j, key, path);
  if (!(v > 0)) throw InputError(path + ": " + key + " must be above 0", "models/" + file);
  return v;
}

}  // namespace

nlohmann::json read_attention_file(const std::string& file, AttentionReference& ref) {
  const std::string path = models_dir() + "/" + file;
  nlohmann::json j = read_json_file(path);
  if (!j.is_object()) throw InputError(path + ": needs a JSON object", "models/" + file);
  ref.mem_bw_gbps = positive_reference(j, "reference_mem_bw_gbps", path, file);
  ref.bf16_tflops = positive_reference(j, "reference_bf16_tflops", path, file);
  return j;
}

// A bad file is refused by the first run that prices such an op, with the file and field named.
AttentionKernelPrice read_attention_kernel(const nlohmann::json& j, const std::string& kernel,
                                           const std::string& file) {
  const std::string path = models_dir() + "/" + file, field = "models/" + file;
  if (!j.contains(kernel) || !j[kernel].is_object() || !j[kernel].contains("terms") || !j[kernel]["terms"].is_object())
    throw InputError(path + ": needs \"" + kernel + "\": {\"terms\": {...}}", field);
  AttentionKernelPrice p;
  for (const auto& [name, value] : j[kernel]["terms"].items()) {
    const auto it = std::find(kAttentionTermNames.begin(), kAttentionTermNames.end(), name);
    if (it == kAttentionTermNames.end())
      throw InputError(path + ": " + kernel + " has an unknown term '" + name + "'", field);
    if (!value.is_number() || value.get<double>() < 0 || !std::isfinite(value.get<double>()))
      throw InputError(path + ": " + kernel + "." + name + " must be a number >= 0", field);
    p.coef[static_cast<std::size_t>(it - kAttentionTermNames.begin())] = value.get<double>();
  }
  if (j[kernel]["terms"].empty()) throw InputError(path + ": " + kernel + " needs at least one term", field);
  return p;
}

int flashinfer_query_tile(double requests, double tokens, double group) {
  const double packed = (tokens - requests + 1) * group;
  return packed > 64 ? 128 : packed > 16 ? 64 : 16;
}

AttentionFeatures attention_features(const Op& op, double bytes, double flops, const GpuProfile& g,
                                     const AttentionReference& ref) {
  static_assert(static_cast<int>(AttentionTerm::FixedUs) == 0 && static_cast<int>(AttentionTerm::UsPerMb) == 4 &&
                    static_cast<int>(AttentionTerm::UsPerToken) == 7,
                "the features below are listed in AttentionTerm's order");
  const double requests = std::max(1.0, op.n), group = std::max(1.0, op.k);
  const double q = std::max(1.0, op.m / requests);  // query tokens a request
  const int tile = flashinfer_query_tile(requests, op.m, group);
  const double padded = std::ceil(q * group / tile) * tile / (q * group);
  const double mem = ref.mem_bw_gbps / g.mem_bw_gbps, flop = ref.bf16_tflops / g.peak_bf16_tflops;
  return {1,
          tile == 16 ? 1.0 : 0.0,
          tile == 64 ? 1.0 : 0.0,
          tile == 128 ? 1.0 : 0.0,
          bytes / 1e6 * mem,
          flops / 1e9 * flop,
          flops / 1e9 * padded * flop,
          op.m};
}

double attention_kernel_us(const AttentionKernelPrice& k, const AttentionFeatures& f) {
  double t = 0;
  for (std::size_t i = 0; i < f.size(); ++i) t += k.coef[i] * f[i];
  return t;
}

}  // namespace specsim
