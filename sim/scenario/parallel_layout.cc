#include "scenario/parallel_layout.h"

#include <fmt/format.h>

#include <cmath>

#include "scenario/flag_ranges.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim {

std::string a2a_backend_name(A2aBackend b) {
  switch (b) {
    case A2aBackend::DeepEP: return "deepep";
    case A2aBackend::Nccl: return "nccl";
    default: return "none";
  }
}

std::string deepep_mode_name(DeepEPMode m) {
  switch (m) {
    case DeepEPMode::Normal: return "normal";
    case DeepEPMode::LowLatency: return "low_latency";
    default: return "auto";
  }
}

namespace {

A2aBackend parse_a2a(const std::string& s) {
  const std::string v = ascii_lower(s);
  if (v == "none") return A2aBackend::None;
  if (v == "deepep") return A2aBackend::DeepEP;
  if (v == "nccl") return A2aBackend::Nccl;
  throw InputError("unknown all-to-all backend '" + s + "': use none, deepep (SGLang's) or nccl (specsim's comparison)",
                   "--moe-a2a-backend");
}

DeepEPMode parse_deepep_mode(const std::string& s) {
  const std::string v = ascii_lower(s);
  if (v == "auto") return DeepEPMode::Auto;
  if (v == "normal") return DeepEPMode::Normal;
  if (v == "low_latency") return DeepEPMode::LowLatency;
  throw InputError("unknown DeepEP mode '" + s + "': use auto, normal or low_latency", "--deepep-mode");
}

}  // namespace

ParallelLayout parse_layout(const ParallelArgs& a, int tp, int routed_experts, std::vector<std::string>& notes) {
  ParallelLayout l;
  if (!a.given()) return l;
  l.pp = a.pp_size.value_or(1);
  flag_ranges::kPpSize.require(l.pp);
  l.dp = a.dp_size.value_or(1);
  if (l.dp < 1) throw InputError(fmt::format("dp size {} is below 1", l.dp), "--dp-size");
  if (l.dp > 1 && !a.enable_dp_attention)
    throw InputError(fmt::format("not modelled: --dp {} without --enable-dp-attention runs {} replicas of the whole "
                                 "model ({} x tp GPUs); price one replica (drop --dp, give its share of the batch)",
                                 l.dp, l.dp, l.dp),
                     "--dp-size");
  l.dp_attention = a.enable_dp_attention;
  if (l.dp_attention && tp % l.dp != 0)
    throw InputError(
        fmt::format("dp {} does not divide tp {}: SGLang runs tp / dp ranks per DP attention group", l.dp, tp),
        "--dp-size");
  if (a.moe_a2a_backend) l.a2a = parse_a2a(*a.moe_a2a_backend);
  if (a.deepep_mode) {
    l.deepep_mode = parse_deepep_mode(*a.deepep_mode);
    if (l.a2a != A2aBackend::DeepEP)
      notes.push_back("--deepep-mode " + *a.deepep_mode + " does nothing without --moe-a2a-backend deepep");
  }
  l.ep = a.ep_size.value_or(1);
  if (l.ep < 1) throw InputError(fmt::format("ep size {} is below 1", l.ep), "--ep-size");
  if (l.a2a != A2aBackend::None && l.ep != tp) {
    // SGLang v0.5.2 server_args.py: "DeepEP MoE is enabled. The expert parallel size is adjusted
    // to be the same as the tensor parallel size" (the all-to-all runs over every rank).
    if (a.ep_size)
      notes.push_back(
          fmt::format("--ep-size {} -> {}: the {} all-to-all runs over every rank (ep = tp), as SGLang sets", l.ep, tp,
                      a2a_backend_name(l.a2a)));
    l.ep = tp;
  }
  if (tp % l.ep != 0)
    throw InputError(fmt::format("ep {} does not divide tp {}: SGLang splits each expert tp / ep ways", l.ep, tp),
                     "--ep-size");
  if (routed_experts == 0 && (l.ep > 1 || l.a2a != A2aBackend::None || l.dp_attention))
    throw InputError("the model has no MoE layers: expert parallelism, all-to-all and DP attention apply to MoE models",
                     l.dp_attention ? "--enable-dp-attention"
                     : l.ep > 1     ? "--ep-size"
                                    : "--moe-a2a-backend");
  if (routed_experts > 0 && routed_experts % l.ep != 0)
    throw InputError(fmt::format("{} routed experts do not split {} ways", routed_experts, l.ep), "--ep-size");
  l.ep_imbalance = a.ep_imbalance.value_or(1.0);
  if (!std::isfinite(l.ep_imbalance) || l.ep_imbalance < 1.0 || l.ep_imbalance > l.ep)
    throw InputError(fmt::format("ep imbalance {} is outside [1, ep = {}]: it is the busiest rank's routed tokens over "
                                 "the mean (1: balanced)",
                                 l.ep_imbalance, l.ep),
                     "--ep-imbalance");
  return l;
}

}  // namespace specsim
