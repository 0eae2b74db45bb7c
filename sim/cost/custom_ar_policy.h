#pragma once
// What the custom all-reduce runs for `auto`: header-only and CUDA-free, so the kernels
// (kernels/car_select.cc) and the analytic engine (sim/cost/custom_ar_model.cc) make the same
// choice and a prediction for "custom" is a prediction for the kernel that would run.
#include <cstddef>

namespace specsim::car_policy {

enum class Pick { OneShotPull, OneShotPush, TwoShot };

// Thresholds (bytes per rank). Starting points, to be refitted from specsim-arbench runs; every
// one can be bypassed by naming the variant.
//
// NVLink (and virtual ranks on one GPU): one-shot moves world x bytes into each rank but needs
// one barrier; two-shot moves ~2x bytes but needs two. vLLM/SGLang switch at 512 KB for up to
// 4 ranks and 256 KB for up to 8 (docs/sources.md#S-custom-ar-design); with 2 ranks one-shot always wins
// (two-shot saves nothing when each rank reads only one peer).
constexpr std::size_t kNvlOneShotMaxBytes4 = 512 * 1024;
constexpr std::size_t kNvlOneShotMaxBytes8 = 256 * 1024;
// PCIe: a posted write costs ~0.4 us against 2-7 us for a loaded peer read (docs/sources.md#S-pcie-p2p-rtx6kpro),
// so small messages push. Pushing sends (world-1) x bytes over each link against ~2x for
// two-shot, so the crossover falls as the world grows.
constexpr std::size_t kPciePushMaxBytes2 = 512 * 1024;
constexpr std::size_t kPciePushMaxBytes4 = 128 * 1024;
constexpr std::size_t kPciePushMaxBytes8 = 64 * 1024;

/// The variant `auto` runs for a message of `bytes` per rank on `world` ranks.
inline Pick select(std::size_t bytes, int world, bool pcie) {
  if (pcie) {
    const std::size_t push_max = world <= 2 ? kPciePushMaxBytes2 : world <= 4 ? kPciePushMaxBytes4 : kPciePushMaxBytes8;
    return bytes <= push_max ? Pick::OneShotPush : Pick::TwoShot;
  }
  if (world <= 2) return Pick::OneShotPull;
  const std::size_t pull_max = world <= 4 ? kNvlOneShotMaxBytes4 : kNvlOneShotMaxBytes8;
  return bytes < pull_max ? Pick::OneShotPull : Pick::TwoShot;
}

}  // namespace specsim::car_policy
