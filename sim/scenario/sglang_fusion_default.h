#pragma once
// Where SGLang turns FlashInfer's all-reduce fusion on by default (no flag given), by release
// (docs/sources.md#S-sglang-fusion-default): the model architectures it does it for, the GPUs
// (compute capability) and the other conditions (DP attention off, one node, no MoE all-to-all
// backend, tp > 1). --enforce-disable-flashinfer-allreduce-fusion (from v0.5.10) turns it off.
#include <string>

#include "scenario/hardware.h"
#include "scenario/model_spec.h"
#include "scenario/run_spec.h"

namespace specsim {

/// Why SGLang `release` ("" for v0.5.2, the pinned release) runs the fusion by default for this
/// target on this hardware and run, in words ("" where it does not).
std::string sglang_fusion_default(const std::string& release, const ModelSpec& target, const Hardware& hw,
                                  const RunSpec& run);

}  // namespace specsim
