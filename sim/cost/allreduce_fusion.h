#pragma once
// The fused layer boundary (all-reduce + residual add + RMSNorm as one kernel): its price from
// models/kernels/allreduce_fusion.json, and where it applies (FlashInfer's: NVLink SM90/SM100;
// this project's: any peer path, messages within the kernel's caps).
#include <string>

namespace specsim {

struct AllReduceFusionModel {
  double fi_tp2_base_us = 0, fi_tp2_us_per_kib = 0, fi_tp8_base_us = 0, fi_tp8_us_per_kib = 0, fi_norm_extra_us = 0;
  double custom_extra_us = 0, custom_max_bytes = 0, custom_max_hidden = 0;
  /// From custom_two_shot_min_rows rows the kernel's default runs its two-shot variant, priced apart.
  double custom_two_shot_min_rows = 0, custom_two_shot_extra_us = 0;
  /// This project's fused kernel over the custom all-reduce for a boundary of `rows` tokens, us
  /// (rows 0: not known, the split variant's price).
  double custom_extra_for(double rows) const;
  /// FlashInfer's fused kernel for one boundary of `bytes` on `world` ranks, us.
  double flashinfer_us(double bytes, int world) const;
};

/// The model, read once from models/; InputError naming the file when malformed.
const AllReduceFusionModel& allreduce_fusion_model();

}  // namespace specsim
