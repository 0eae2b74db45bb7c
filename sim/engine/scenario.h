#pragma once
// A whole scenario: model, draft, hardware, settings, anchors -> one CycleResult per backend.
#include <optional>
#include <string>
#include <vector>

#include "engine/anchors.h"
#include "engine/cycle_eval.h"

namespace specsim {

struct Scenario {
  ModelSpec target;
  std::optional<ModelSpec> draft;
  Hardware hw;
  RunSpec run;
  /// Settings at which the measured_* anchors were taken, when they differ from `run` (the
  /// built-in scenario's what-ifs); none: the run's own settings.
  std::optional<RunSpec> measured;
  /// The hardware the measurements were taken on, when it differs from `hw`.
  std::optional<Hardware> measured_hw;
  /// The user did not pick backends: a refused custom kernel is shown as refused, not fatal.
  bool backends_defaulted = false;
  /// The measured box differs from this run's: keep only the measured acceptance, not the
  /// box-specific all-reduce and overhead anchors.
  bool anchor_accept_only = false;
  std::string title;               ///< e.g. the built-in scenario's name
  std::vector<std::string> notes;  ///< assumptions to print with the report
};

struct ScenarioResult {
  CyclePlan plan;
  Anchors anchors;
  AnchorReport anchor_report;
  double accept_len = 0;
  double accept_rate = -1;    ///< per-token rate when known (chain formula), else -1
  std::string accept_source;  ///< where the accept len comes from, in words
  std::vector<CycleResult> results;  ///< one per backend, in the order asked
};

/// Plans, anchors and evaluates. InputError on bad or contradictory input.
ScenarioResult run_scenario(const Scenario& s);

}  // namespace specsim
