#pragma once
// Where SGLang's --enable-flashinfer-allreduce-fusion can run: FlashInfer's fused all-reduce is
// built for NVLink on SM90/SM100 GPUs (its JIT refuses SM120). Its price: cost/allreduce_fusion.h.
#include <string>

#include "scenario/hardware.h"

namespace specsim {

/// Why FlashInfer's fusion cannot run on `hw` (not NVLink, or not an SM90/SM100 GPU), else "".
std::string flashinfer_fusion_refusal(const Hardware& hw);

}  // namespace specsim
