#pragma once
// `specsim bench`: how many cycle evaluations (and plan builds) per second one core does, the
// budget a sweep spends.
#include <string>

#include "scenario/resolve.h"

namespace specsim {

/// Resolves and evaluates the scenario once, then times cycle evaluations and plan builds for
/// `seconds` each; returns the rates in words.
std::string throughput_bench(const RunArgs& args, double seconds);

}  // namespace specsim
