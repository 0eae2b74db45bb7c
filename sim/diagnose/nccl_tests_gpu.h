#pragma once
// Which GPU an nccl-tests log ran on, against the --hardware a diagnosis prices.
#include <string>

namespace specsim::diagnose {

/// The GPU an nccl-tests log names ("#  Rank  0 ... device  0 [0x07] NVIDIA A100-SXM4-80GB") when
/// it is not the hardware profile's (whose name, "a100-sxm", leads with the chip: "a100"); "" when
/// it is, or the log names none.
std::string nccl_tests_other_gpu(const std::string& file, const std::string& profile);

}  // namespace specsim::diagnose
