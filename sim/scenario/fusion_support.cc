#include "scenario/fusion_support.h"

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

}  // namespace specsim
