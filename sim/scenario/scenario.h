#pragma once
// What one run asks: model, draft, hardware, settings and the settings its measurements were
// taken at. Pure description; evaluate/evaluate_scenario.h evaluates it.
#include <optional>
#include <string>
#include <vector>

#include "scenario/hardware.h"
#include "scenario/measured_run.h"
#include "scenario/model_spec.h"
#include "scenario/run_spec.h"
#include "scenario/runtime_profile.h"

namespace specsim {

/// One flag of a pasted launch command as the report lists it: its class and what it changes.
struct PastedFlagRow {
  std::string flag, value, cls, what;
};

struct Scenario {
  ModelSpec target;
  std::optional<ModelSpec> draft;
  Hardware hw;
  RunSpec run;
  /// The measurements anchoring the model, each with where it was taken (built-in first).
  std::vector<MeasuredRun> measured;
  /// The user did not pick backends: a refused custom kernel is shown as refused, not fatal.
  bool backends_defaulted = false;
  /// The serving runtime whose own work is costed (--runtime); none: forwards only.
  std::optional<RuntimeProfile> runtime;
  std::string title;               ///< e.g. the built-in scenario's name
  std::vector<std::string> notes;  ///< assumptions to print with the report
  /// No --hardware: the default box, said so in the header.
  bool hardware_defaulted = false;
  /// A pasted launch command: its stack ("SGLang v0.5.2", "vLLM v0.11.0") and each flag.
  std::string pasted_stack;
  std::vector<PastedFlagRow> pasted_flags;
};

}  // namespace specsim
