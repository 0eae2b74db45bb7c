#include "cost/fa3_attention_cost.h"

#include <algorithm>

namespace specsim {

namespace {

constexpr const char* kFa3File = "kernels/fa3_attention.json";

Fa3AttentionPrice read_fa3_price() {
  Fa3AttentionPrice p;
  const nlohmann::json j = read_attention_file(kFa3File, p.reference);
  p.fa3 = read_attention_kernel(j, "fa3", kFa3File);
  p.fa3_mla = read_attention_kernel(j, "fa3_mla", kFa3File);
  return p;
}

}  // namespace

const Fa3AttentionPrice& fa3_attention_price() {
  static const Fa3AttentionPrice price = read_fa3_price();
  return price;
}

double fa3_attention_us(const Op& op, const GpuProfile& g) {
  const Fa3AttentionPrice& p = fa3_attention_price();
  const AttentionKernelPrice& k = op.attention_kernel == AttentionKernel::Fa3Mla ? p.fa3_mla : p.fa3;
  return std::max(g.kernel_min_us, attention_kernel_us(k, attention_features(op, op.bytes, op.flops, g, p.reference)));
}

}  // namespace specsim
