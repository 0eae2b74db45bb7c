#pragma once
// A runtime profile priced for one run: the runtime's own work per forward of each phase, split
// into host time (Python/CPU: scales with the host, `host_launch_us`) and small-kernel GPU time
// (scales with the GPU's kernel floor, or its HBM bandwidth for per-token terms).
#include <array>
#include <string>
#include <vector>

#include "scenario/hardware.h"
#include "scenario/runtime_profile.h"
#include "scenario/scenario.h"

namespace specsim {

/// The runtime's work around one forward of a phase, microseconds.
struct PhaseRuntime {
  double host_us = 0;         ///< host (Python) work
  double gpu_eager_us = 0;    ///< small kernels launched eagerly by that host work (overlap it)
  double gpu_graphed_us = 0;  ///< small kernels inside the phase's CUDA graph
  double fitted_host_us = 0;  ///< the part of host_us from terms fitted to a published run
  bool overlapped = false;    ///< host work runs while the GPU executes the forward (overlap scheduler,
                              ///< or a loop with no sync between its forwards)
  /// The time this adds to a forward whose own time is `forward_us`: host and eager kernels
  /// overlap each other; overlapped host work shows only where it outlasts the forward.
  double exposed_us(double forward_us) const;
};

/// Per phase kind (indexed by PhaseKind).
struct RuntimeCost {
  std::array<PhaseRuntime, kNumPhaseKinds> phase{};
  bool active = false;  ///< false: no profile (forwards only)
  /// The fitted host terms that apply to this run's speculative cycle, each once ("NAME VALUE
  /// us"; RuntimeTerm::fitted), and where they were fitted.
  std::vector<std::string> fitted_terms, fitted_sources;
};

/// Prices `p` for `run` on `hw`. `target_vocab` / `draft_vocab` scale the per-token vocab terms
/// (and a draft vocabulary smaller than the target's turns on the `draft_vocab_map` terms).
/// Per-cycle terms are spread over the phase's forwards; with S = 1 (no draft decode forward) the
/// draft-step terms and the between-forward ("cycle") terms sit on verify. Greedy requests
/// (sampling-only terms left out); per-accepted-token terms at bs x (S+1), the padded count.
RuntimeCost runtime_cost(const RuntimeProfile& p, const RunSpec& run, const Hardware& hw, int target_vocab,
                         int draft_vocab);

/// The scenario's runtime profile priced for `run` on `hw` (inactive when it has none).
RuntimeCost runtime_for(const Scenario& s, const RunSpec& run, const Hardware& hw);

}  // namespace specsim
