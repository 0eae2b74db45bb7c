#include "cost/harness_launch.h"

#include <algorithm>

#include "scenario/hardware.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

SingleThreadLaunch load_single_thread_launch() {
  const std::string path = nccl_tuning_path();
  const nlohmann::json j = read_json_file(path);
  const std::string w = path + ": single_thread_launch";
  if (!j.contains("single_thread_launch") || !j["single_thread_launch"].is_object())
    throw InputError("missing the single_thread_launch block", w);
  const auto& b = j["single_thread_launch"];
  SingleThreadLaunch l;
  l.per_gpu_us = sourced_number(b, "per_gpu_us", w);
  l.group_us = sourced_number(b, "group_us", w);
  if (l.per_gpu_us <= 0 || l.group_us < 0) throw InputError("per_gpu_us must be > 0 and group_us >= 0", w);
  return l;
}

HarnessTime nccl_tests_iteration_us(double collective_us, int gpus_per_thread, int iters,
                                    const SingleThreadLaunch& launch) {
  if (gpus_per_thread <= 1 || iters < 1) return {collective_us, 0, false};
  const double host = launch.host_us(gpus_per_thread);
  return {std::max(host, collective_us) + std::min(host, collective_us) / iters, host, host > collective_us};
}

}  // namespace specsim
