#pragma once
// The custom all-reduce's variants, limits and the choice `auto` makes. Header-only, CUDA-free
// and C++17, so the kernels (kernels/car_select.cc) and the analytic engine
// (sim/cost/custom_ar_model.cc) share one enum, one set of limits and one selector: a prediction
// for "custom" is a prediction for the kernel that would run.
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace specsim::car_policy {

/// Which kernel runs. Auto asks select(). OneShotLL and OneShotLLPull are flag-free one-shots:
/// readiness travels with the data (a reserved bit pattern marks a receive slot as empty), so a
/// call needs no barrier before or after it. TwoShotLL is the flag-free two-shot (a reduce-scatter
/// and an all-gather in the same packets): fewer bytes than one-shot-ll, one more wait.
/// OneShotLLBcast is the flag-free one-shot with one copy per owner: each rank writes its input
/// once into its own area and every peer reads that copy (world + 4 accesses per vector and rank
/// against 3 x world for one-shot-ll); the owner empties its copy a call later.
enum class Variant { Auto, OneShotPull, OneShotPush, TwoShot, OneShotLL, OneShotLLPull, TwoShotLL, OneShotLLBcast };

/// Every concrete variant, in enum order (for loops over "all variants").
inline constexpr Variant kConcreteVariants[] = {Variant::OneShotPull,   Variant::OneShotPush,   Variant::TwoShot,
                                                Variant::OneShotLL,     Variant::OneShotLLPull, Variant::TwoShotLL,
                                                Variant::OneShotLLBcast};

/// Smallest world size: a world of one has nothing to reduce.
inline constexpr int kMinRanks = 2;
/// Largest world size the kernels handle (flag arrays and pointer tables are sized by it).
inline constexpr int kMaxRanks = 8;
/// Largest message per rank a communicator accepts by default (its staging buffer).
inline constexpr std::size_t kMaxBytes = std::size_t{8} << 20;
/// Largest message per rank the flag-free variants carry: their receive slots (2 parities x world
/// per rank) are sized by it, not by kMaxBytes, and they are meant for small messages.
inline constexpr std::size_t kLlMaxBytes = std::size_t{1} << 20;

/// Whether the fused all-reduce + residual add + RMSNorm runs a layer boundary whose all-reduce
/// moves `ar_bytes` of bf16 over `rows` tokens: within `max_bytes`, and a hidden size that is a
/// whole number of 16-byte vectors up to `max_hidden` (the engine passes its sourced limits, the
/// GPU replay the kernel's own; so both fuse the same boundaries).
inline bool fused_boundary_fits(double ar_bytes, unsigned rows, double max_bytes, double max_hidden) {
  if (rows == 0 || ar_bytes > max_bytes) return false;
  const double hidden = ar_bytes / 2.0 / rows;
  return hidden > 0 && hidden <= max_hidden && std::fmod(hidden, 8.0) == 0;
}

/// True for the flag-free variants (one-shot-ll, one-shot-ll-pull, two-shot-ll, one-shot-ll-bcast).
constexpr bool is_flag_free(Variant v) {
  return v == Variant::OneShotLL || v == Variant::OneShotLLPull || v == Variant::TwoShotLL ||
         v == Variant::OneShotLLBcast;
}

/// True for the variants the engine's model costs (sim/cost/custom_ar_model.cc). two-shot-ll is
/// measured only on virtual ranks of one GPU, which say nothing of a link's costs: not costed.
constexpr bool engine_costs(Variant v) { return v != Variant::TwoShotLL; }

/// `auto`, `one-shot-pull`, `one-shot-push`, `two-shot`, `one-shot-ll`, `one-shot-ll-pull`, `two-shot-ll`,
/// `one-shot-ll-bcast`.
constexpr std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::Auto: return "auto";
    case Variant::OneShotPull: return "one-shot-pull";
    case Variant::OneShotPush: return "one-shot-push";
    case Variant::TwoShot: return "two-shot";
    case Variant::OneShotLL: return "one-shot-ll";
    case Variant::OneShotLLPull: return "one-shot-ll-pull";
    case Variant::TwoShotLL: return "two-shot-ll";
    case Variant::OneShotLLBcast: return "one-shot-ll-bcast";
  }
  return "invalid-variant";
}

/// Every accepted name, for error messages: "auto, one-shot-pull, ..., one-shot-ll-bcast".
inline std::string variant_names() {
  std::string s(variant_name(Variant::Auto));
  for (Variant v : kConcreteVariants) s += ", " + std::string(variant_name(v));
  return s;
}

/// Parses the names above; nullopt for anything else.
inline std::optional<Variant> parse_variant(std::string_view name) {
  if (name == variant_name(Variant::Auto)) return Variant::Auto;
  for (Variant v : kConcreteVariants)
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

// Flag-free one-shot (one-shot-ll): no barrier; it moves the bytes one-shot push moves. Measured
// on 2 H200s (NVLink), 200 calls in a CUDA graph: faster than one-shot pull, push and two-shot at
// every size from 1 KB to its 1 MiB cap (3.6 us against 5.2 for pull at 14-114 KB; 9.1 against
// 10.5 at 1 MiB; traces/experiments/README.md, experiment 3). Wider worlds are not measured on real GPUs: there the
// caps come from the engine's model (sim/cost/custom_ar_model.cc: one barrier plus the bytes), whose crossover with
// two-shot at 8 ranks falls near 780 KB on NVLink and 250-450 KB on the PCIe profiles.
inline constexpr std::size_t kLlMaxBytes4 = kLlMaxBytes;
inline constexpr std::size_t kLlMaxBytes8 = 512 * 1024;
inline constexpr std::size_t kPcieLlMaxBytes8 = 256 * 1024;

// Flag-free two-shot (two-shot-ll): never picked. Measured only on virtual ranks of one H200
// (kernels/README.md), where it is slower than one-shot-ll up to 57 KB and faster from 114 KB at
// 8 ranks; that says nothing of real links, and the engine does not cost it (engine_costs).

// Flag-free one-shot with one copy per owner (one-shot-ll-bcast): never picked. On real GPUs a
// reader's poll of the owner's copy is a loaded remote round trip where one-shot-ll's readiness is a
// one-way write; the engine's model (sim/cost/custom_ar_model.cc) puts that extra latency above the
// local passes it saves on every link profile in models/, world 2..8 and size up to kLlMaxBytes
// (tests/test_cost.cc checks it). Its gain is on virtual ranks of one GPU (kernels/README.md), which
// the selector does not tell from NVLink.

/// The variant `auto` runs for a message of `bytes` per rank on `world` ranks (never Auto).
inline Variant select(std::size_t bytes, int world, bool pcie) {
  const std::size_t ll_max = world <= 4 ? kLlMaxBytes4 : pcie ? kPcieLlMaxBytes8 : kLlMaxBytes8;
  if (bytes <= ll_max) return Variant::OneShotLL;
  if (pcie) {
    const std::size_t push_max = world <= 2 ? kPciePushMaxBytes2 : world <= 4 ? kPciePushMaxBytes4 : kPciePushMaxBytes8;
    return bytes <= push_max ? Variant::OneShotPush : Variant::TwoShot;
  }
  if (world <= 2) return Variant::OneShotPull;
  const std::size_t pull_max = world <= 4 ? kNvlOneShotMaxBytes4 : kNvlOneShotMaxBytes8;
  return bytes < pull_max ? Variant::OneShotPull : Variant::TwoShot;
}

}  // namespace specsim::car_policy
