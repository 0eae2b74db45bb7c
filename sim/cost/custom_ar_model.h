#pragma once
// Our custom all-reduce (kernels/): one-shot pull, one-shot push, two-shot and the flag-free
// one-shots (one-shot-ll, -pull, -bcast), on any topology where peers can reach each other's memory.
// Time = barriers (none for the flag-free ones) + remote-access latency + bytes over the GPU's peer
// bandwidth + the local reduction. The flag-free two-shot is not costed (no link measurements): refused with a message.
#include <string>

#include "scenario/custom_ar_policy.h"
#include "scenario/hardware.h"

namespace specsim {

/// The kernel's variants and limits, stated once in scenario/custom_ar_policy.h.
using CustomVariant = car_policy::Variant;
constexpr std::string_view custom_variant_name(CustomVariant v) { return car_policy::variant_name(v); }
constexpr int kCustomMinWorld = car_policy::kMinRanks;
constexpr int kCustomMaxWorld = car_policy::kMaxRanks;
constexpr double kCustomMaxBytes = static_cast<double>(car_policy::kMaxBytes);

struct CustomEstimate {
  double us = 0;
  CustomVariant variant = CustomVariant::OneShotPull;
};

/// Why the custom kernel cannot run on this hardware at this world size ("" when it can).
std::string custom_unsupported_reason(const Hardware& hw, int world);

/// Why the custom kernel cannot reduce `bytes` per rank here: the above, or the buffer limit.
std::string custom_refusal(const Hardware& hw, int world, double bytes);

/// Time of one variant on this machine, no checks: the stacks' own kernels (stack_allreduce.h)
/// share the one-shot and two-shot shapes of this model. `v` must be a costed variant.
double custom_variant_us(CustomVariant v, double bytes, int world, const Hardware& hw);

/// Time of one variant (requested: "auto" is what the kernel's selector runs, sim/scenario/custom_ar_policy.h). `bytes`
/// above the buffer limit, an unsupported machine or a variant the model does not cost (two-shot-ll,
/// car_policy::engine_costs) throw InputError naming --allreduce.
CustomEstimate custom_allreduce(double bytes, int world, const Hardware& hw, const std::string& requested);

}  // namespace specsim
