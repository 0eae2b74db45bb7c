#pragma once
// What one run asks: model, draft, hardware, settings and the settings its measurements were
// taken at. Pure description; engine/scenario.h evaluates it.
#include <optional>
#include <string>
#include <vector>

#include "runtime/runtime_profile.h"
#include "spec/hardware.h"
#include "spec/model_spec.h"
#include "spec/run_spec.h"

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
  /// The serving runtime whose own work is costed (--runtime); none: forwards only.
  std::optional<RuntimeProfile> runtime;
  std::string title;               ///< e.g. the built-in scenario's name
  std::vector<std::string> notes;  ///< assumptions to print with the report
};

}  // namespace specsim
