#pragma once
// Measurements taken together: one box (hardware, tp, dtype) at one set of serving settings.
// The built-in scenario brings one; what the user gives on the command line is another, taken
// at the run's own settings. anchors/anchors.h turns each into what it reveals beyond the model.
#include <string>

#include "scenario/hardware.h"
#include "scenario/run_spec.h"

namespace specsim {

struct MeasuredRun {
  std::string origin;  ///< "built-in" or "command line"
  RunSpec run;         ///< the settings they were taken at; measured_* hold the values
  Hardware hw;         ///< the box they were taken on
  std::string baseline_source, allreduce_source, spec_source;  ///< where each value comes from
};

/// A figure whose source starts with "implied" was derived from other measurements, not taken
/// (specsim diagnose writes such a baseline when it has only a speculative log); reports say
/// "implied" for it instead of "measured".
inline bool implied_source(const std::string& source) { return source.rfind("implied", 0) == 0; }

}  // namespace specsim
