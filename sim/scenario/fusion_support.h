#pragma once
// Where SGLang's --enable-flashinfer-allreduce-fusion can run: FlashInfer's fused all-reduce is
// built for NVLink on SM90/SM100 GPUs (its JIT refuses SM120). Its price: cost/allreduce_fusion.h.
#include <string>

#include "scenario/hardware.h"
#include "scenario/resolve.h"
#include "scenario/scenario.h"

namespace specsim {

/// Why FlashInfer's fusion cannot run on `hw` (not NVLink, or not an SM90/SM100 GPU), else "".
std::string flashinfer_fusion_refusal(const Hardware& hw);

/// Whether `s` runs FlashInfer's fusion: the flags (--enforce-disable-... winning over --enable-...,
/// as in SGLang), else on an SGLang runtime (`sglang`) SGLang's own default for the release, model
/// and GPU (scenario/sglang_fusion_default.h); each decision in a note, the command line's
/// measurements given the same. InputError where the flag asks for it and FlashInfer cannot run it.
void decide_flashinfer_fusion(const RunArgs& a, bool sglang, Scenario& s);

}  // namespace specsim
