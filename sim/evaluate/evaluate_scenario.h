#pragma once
// A whole scenario (scenario/scenario.h) evaluated: plan, anchors -> one CycleResult per backend.
#include <optional>
#include <string>
#include <vector>

#include "anchors/anchors.h"
#include "engine/cycle_eval.h"
#include "scenario/scenario.h"

namespace specsim {

struct ScenarioResult {
  CyclePlan plan;
  Anchors anchors;
  AnchorReport anchor_report;
  double accept_len = 0;
  double accept_rate = -1;           ///< per-token rate when known (chain formula), else -1
  std::string accept_source;         ///< where the accept len comes from, in words
  RuntimeCost runtime;               ///< the runtime profile priced for this run (inactive: none)
  std::vector<CycleResult> results;  ///< one per backend, in the order asked
  /// The baseline every what-if is also compared with: plain decoding with NCCL at these
  /// settings, anchored; `reference_measured` when it is the measured figure itself.
  double reference_baseline_tok_s = 0;
  bool reference_measured = false;
  bool reference_implied = false;  ///< the baseline is one a measurement implied (diagnose), not measured
  /// Of the first backend's speculative cycle, the share that is host time of runtime terms
  /// fitted to a published run (RuntimeTerm::fitted), before overlap; 0 when none applies or a
  /// measured speculative run anchors the cycle. `fitted_host_caution` says it in words when it
  /// is a fifth of the cycle or more.
  double fitted_host_share = 0;
  std::string fitted_host_caution;
};

/// Plans, anchors and evaluates. InputError on bad or contradictory input.
ScenarioResult run_scenario(const Scenario& s);

}  // namespace specsim
