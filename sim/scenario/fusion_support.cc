#include "scenario/fusion_support.h"

#include "scenario/sglang_fusion_default.h"
#include "util/error.h"

namespace specsim {

std::string flashinfer_fusion_refusal(const Hardware& hw) {
  if (hw.gpu.amd)
    return "FlashInfer's fused all-reduce is a CUDA kernel and does not run on ROCm (" + hw.gpu.name +
           "); compare --allreduce sglang or nccl (RCCL) instead";
  if (hw.topo.link != LinkKind::NVLink)
    return "FlashInfer's fused all-reduce runs over NVLink only (this topology is PCIe; on SM120 PCIe boxes its JIT "
           "refuses the GPU); compare --allreduce custom:fused instead";
  if (hw.gpu.arch != GpuArch::Hopper && hw.gpu.arch != GpuArch::Blackwell)
    return "FlashInfer's fused all-reduce runs on SM90/SM100 GPUs only (this GPU is " +
           std::string(arch_name(hw.gpu.arch)) + "); compare --allreduce custom:fused instead";
  return "";
}

namespace {

// The refusal's reason without its advice (what precedes its ';').
std::string refusal_clause(const Hardware& hw) {
  const std::string why = flashinfer_fusion_refusal(hw);
  return why.substr(0, why.find(';'));
}

}  // namespace

void decide_flashinfer_fusion(const RunArgs& a, bool sglang, Scenario& s) {
  // --enforce-disable-flashinfer-allreduce-fusion wins over the flag, as in SGLang (v0.5.10 on)
  const bool fusion_asked = a.enable_flashinfer_allreduce_fusion && !a.enforce_disable_flashinfer_allreduce_fusion;
  if (a.enable_flashinfer_allreduce_fusion && a.enforce_disable_flashinfer_allreduce_fusion)
    s.notes.push_back(
        "--enforce-disable-flashinfer-allreduce-fusion wins over --enable-flashinfer-allreduce-fusion, "
        "as in SGLang: the fusion is off");
  if (fusion_asked && s.run.layout.dp_attention) {
    // SGLang's apply_flashinfer_allreduce_fusion() is false under DP attention (communicator.py)
    s.notes.push_back("--enable-flashinfer-allreduce-fusion does nothing under --enable-dp-attention, as in SGLang");
  } else if (fusion_asked && a.fusion_from && !flashinfer_fusion_refusal(s.hw).empty()) {
    s.notes.push_back(*a.fusion_from + " show FlashInfer's all-reduce fusion on, but " + refusal_clause(s.hw) +
                      " (--hardware): priced without it");
  } else if (fusion_asked) {
    const std::string why = flashinfer_fusion_refusal(s.hw);
    if (!why.empty()) throw InputError(why, "--enable-flashinfer-allreduce-fusion");
    s.run.flashinfer_fusion = true;
    s.notes.push_back(
        "--enable-flashinfer-allreduce-fusion: every layer boundary (2 per layer) runs FlashInfer's fused "
        "all-reduce + residual add + RMSNorm in every --allreduce column; its price: "
        "models/kernels/allreduce_fusion.json");
  } else if (sglang) {  // no flag: SGLang's own default for this release, model and GPU
    const std::string why = sglang_fusion_default(s.run.sglang_release, s.target, s.hw, s.run);
    const bool refused = !why.empty() && !flashinfer_fusion_refusal(s.hw).empty();
    if (!why.empty() && a.enforce_disable_flashinfer_allreduce_fusion)
      s.notes.push_back(why +
                        ": kept off (--enforce-disable-flashinfer-allreduce-fusion, or a server log that shows "
                        "it off)");
    else if (refused)
      s.notes.push_back(why + ", but " + refusal_clause(s.hw) + ": priced without it");
    else if (!why.empty()) {
      s.run.flashinfer_fusion = s.run.flashinfer_fusion_by_default = true;
      s.notes.push_back(why +
                        ": every layer boundary (2 per layer) runs FlashInfer's fused all-reduce + residual "
                        "add + RMSNorm in every --allreduce column (models/kernels/allreduce_fusion.json); "
                        "--enforce-disable-flashinfer-allreduce-fusion turns it off");
    }
  }
  // A measurement given beside the run was taken with the run's settings: with its fusion too.
  for (auto& m : s.measured)
    if (m.origin == "command line") m.run.flashinfer_fusion = s.run.flashinfer_fusion;
}

}  // namespace specsim
