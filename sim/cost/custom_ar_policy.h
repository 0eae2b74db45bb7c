#pragma once
// The custom all-reduce's variants, limits and the choice `auto` makes. Header-only, CUDA-free
// and C++17, so the kernels (kernels/car_select.cc) and the analytic engine
// (sim/cost/custom_ar_model.cc) share one enum, one set of limits and one selector: a prediction
// for "custom" is a prediction for the kernel that would run.
#include <cstddef>
#include <optional>
#include <string_view>

namespace specsim::car_policy {

/// Which kernel runs. Auto asks select().
enum class Variant { Auto, OneShotPull, OneShotPush, TwoShot };

/// Every concrete variant, in enum order (for loops over "all variants").
inline constexpr Variant kConcreteVariants[] = {Variant::OneShotPull, Variant::OneShotPush, Variant::TwoShot};

/// Smallest world size: a world of one has nothing to reduce.
inline constexpr int kMinRanks = 2;
/// Largest world size the kernels handle (flag arrays and pointer tables are sized by it).
inline constexpr int kMaxRanks = 8;
/// Largest message per rank a communicator accepts by default (its staging buffer).
inline constexpr std::size_t kMaxBytes = std::size_t{8} << 20;

/// `auto`, `one-shot-pull`, `one-shot-push`, `two-shot`.
constexpr std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::Auto: return "auto";
    case Variant::OneShotPull: return "one-shot-pull";
    case Variant::OneShotPush: return "one-shot-push";
    case Variant::TwoShot: return "two-shot";
  }
  return "invalid-variant";
}

/// Parses the names above; nullopt for anything else.
inline std::optional<Variant> parse_variant(std::string_view name) {
  for (Variant v : {Variant::Auto, Variant::OneShotPull, Variant::OneShotPush, Variant::TwoShot})
    if (name == variant_name(v)) return v;
  return std::nullopt;
}

// Thresholds (bytes per rank). Starting points, to be refitted from specsim-arbench runs; every
// one can be bypassed by naming the variant.
//
// NVLink (and virtual ranks on one GPU): one-shot moves world x bytes into each rank but needs
// one barrier; two-shot moves ~2x bytes but needs two. vLLM/SGLang switch at 512 KB for up to
// 4 ranks and 256 KB for up to 8 (docs/sources.md#S-custom-ar-design); with 2 ranks one-shot always wins
// (two-shot saves nothing when each rank reads only one peer).
inline constexpr std::size_t kNvlOneShotMaxBytes4 = 512 * 1024;
inline constexpr std::size_t kNvlOneShotMaxBytes8 = 256 * 1024;
// PCIe: a posted write costs ~0.4 us against 2-7 us for a loaded peer read (docs/sources.md#S-pcie-p2p-rtx6kpro),
// so small messages push. Pushing sends (world-1) x bytes over each link against ~2x for
// two-shot, so the crossover falls as the world grows.
inline constexpr std::size_t kPciePushMaxBytes2 = 512 * 1024;
inline constexpr std::size_t kPciePushMaxBytes4 = 128 * 1024;
inline constexpr std::size_t kPciePushMaxBytes8 = 64 * 1024;

/// The variant `auto` runs for a message of `bytes` per rank on `world` ranks (never Auto).
inline Variant select(std::size_t bytes, int world, bool pcie) {
  if (pcie) {
    const std::size_t push_max = world <= 2 ? kPciePushMaxBytes2 : world <= 4 ? kPciePushMaxBytes4 : kPciePushMaxBytes8;
    return bytes <= push_max ? Variant::OneShotPush : Variant::TwoShot;
  }
  if (world <= 2) return Variant::OneShotPull;
  const std::size_t pull_max = world <= 4 ? kNvlOneShotMaxBytes4 : kNvlOneShotMaxBytes8;
  return bytes < pull_max ? Variant::OneShotPull : Variant::TwoShot;
}

}  // namespace specsim::car_policy
