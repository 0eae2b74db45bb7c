#pragma once
// Which GPU an nccl-tests log ran on, against the --hardware a diagnosis prices.
#include <string>

namespace specsim::diagnose {

/// The GPU an nccl-tests log names ("#  Rank  0 ... device  0 [0x07] NVIDIA A100-SXM4-80GB") when
/// it is not the hardware profile's (nccl_tests_same_gpu); "" when it is, or the log names none.
std::string nccl_tests_other_gpu(const std::string& file, const std::string& profile);

/// Whether an nccl-tests device name ("NVIDIA H100 80GB HBM3") is the profile's GPU ("h100-sxm"):
/// every part of the profile's name a whole word of it, SXM implicit, PCIe and NVL parts apart.
bool nccl_tests_same_gpu(const std::string& device, const std::string& profile);

}  // namespace specsim::diagnose
