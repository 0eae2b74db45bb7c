#pragma once
// Our custom all-reduce (kernels/): one-shot pull, one-shot push, two-shot, on any topology where
// peers can reach each other's memory. Time = barriers + remote-access latency + bytes over the
// GPU's peer bandwidth + the local reduction.
#include <string>

#include "spec/hardware.h"

namespace specsim {

enum class CustomVariant { OneShotPull = 0, OneShotPush = 1, TwoShot = 2 };
std::string_view custom_variant_name(CustomVariant v);

/// The kernel's limits (kernels/custom_allreduce.h): world sizes and buffer size.
constexpr int kCustomMinWorld = 2;
constexpr int kCustomMaxWorld = 8;
constexpr double kCustomMaxBytes = 8.0 * 1024 * 1024;

struct CustomEstimate {
  double us = 0;
  CustomVariant variant = CustomVariant::OneShotPull;
};

/// Why the custom kernel cannot run on this hardware at this world size ("" when it can).
std::string custom_unsupported_reason(const Hardware& hw, int world);

/// Time of one variant (requested: "auto" is what the kernel's selector runs, sim/cost/custom_ar_policy.h). `bytes` above the buffer limit or an
/// unsupported machine throw InputError naming --allreduce.
CustomEstimate custom_allreduce(double bytes, int world, const Hardware& hw, const std::string& requested);

}  // namespace specsim
