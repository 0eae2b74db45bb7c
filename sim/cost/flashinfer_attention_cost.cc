#include "cost/flashinfer_attention_cost.h"

#include <algorithm>

namespace specsim {

namespace {

constexpr const char* kFlashInferFile = "kernels/flashinfer_attention.json";

FlashInferAttentionPrices read_flashinfer_prices() {
  FlashInferAttentionPrices p;
  const nlohmann::json j = read_attention_file(kFlashInferFile, p.reference);
  p.prefill = read_attention_kernel(j, "prefill", kFlashInferFile);
  p.custom = read_attention_kernel(j, "custom", kFlashInferFile);
  p.decode = read_attention_kernel(j, "decode", kFlashInferFile);
  p.decode_tc = read_attention_kernel(j, "decode_tc", kFlashInferFile);
  return p;
}

}  // namespace

const FlashInferAttentionPrices& flashinfer_attention_prices() {
  static const FlashInferAttentionPrices prices = read_flashinfer_prices();
  return prices;
}

double flashinfer_attention_us(const Op& op, const GpuProfile& g, double mask_factor) {
  const FlashInferAttentionPrices& p = flashinfer_attention_prices();
  if (op.attention_kernel == AttentionKernel::FlashInferMask) {
    // the pass's own bytes and FLOPs, from the extra op's (mask_factor - 1) x them
    if (mask_factor <= 1) return 0;
    const AttentionFeatures f =
        attention_features(op, op.bytes / (mask_factor - 1), op.flops / (mask_factor - 1), g, p.reference);
    return std::max(0.0, attention_kernel_us(p.custom, f) - attention_kernel_us(p.prefill, f));
  }
  const AttentionKernelPrice* k = op.attention_kernel == AttentionKernel::FlashInferPrefill    ? &p.prefill
                                  : op.attention_kernel == AttentionKernel::FlashInferDecode   ? &p.decode
                                  : op.attention_kernel == AttentionKernel::FlashInferDecodeTc ? &p.decode_tc
                                                                                               : nullptr;
  return k ? std::max(g.kernel_min_us,
                      attention_kernel_us(*k, attention_features(op, op.bytes, op.flops, g, p.reference)))
           : 0.0;
}

}  // namespace specsim
