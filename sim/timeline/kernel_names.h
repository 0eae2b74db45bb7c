#pragma once
// The GPU kernel names a torch.profiler trace of the serving runtime shows for specsim's ops
// (models/runtime/kernel-names.json), so a predicted trace and a real profile overlay in Perfetto
// by name.
#include <nlohmann/json.hpp>
#include <string>

#include "plan/op.h"
#include "scenario/run_spec.h"

namespace specsim {

class KernelNames {
 public:
  /// The table of `runtime` ("sglang", "vllm") from models/runtime/kernel-names.json; InputError
  /// naming the file when it is missing or malformed.
  explicit KernelNames(const std::string& runtime);

  /// The kernel name of `op` with all-reduce backend `backend`: by op name, then by op kind; a
  /// collective without a kernel (a fixed latency) or an op the table lacks keeps its op name.
  std::string name(const Op& op, const AllReduceChoice& backend) const;

  const std::string& runtime() const { return runtime_; }

 private:
  std::string runtime_;
  nlohmann::json table_;
};

}  // namespace specsim
