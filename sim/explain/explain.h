#pragma once
// When a user's measurements contradict each other under the settings they stated (a pasted
// launch command leaves out how the deployment really ran), search the few assumptions the tool
// knows for the ones that make every measurement hold: which phases ran eagerly, NCCL's P2P
// level, NCCL's algorithm and protocol. The best is used and said, with the runner-up and the
// flags that state it; when none fits, the first contradiction is reported with what was tried.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"

namespace specsim {

/// One set of assumptions tried: the flags it adds to what the user stated.
struct Assumption {
  std::string words;               ///< "verify ran eagerly, NCCL_P2P_LEVEL=SYS"
  std::vector<std::string> flags;  ///< "--eager-phases verify", "--nccl-p2p-level SYS"
  int changes = 0;                 ///< assumptions made: fewer is simpler
  double unexplained = 0;          ///< the anchors' extra terms, relative to what they measured
};

/// A scenario evaluated, with the assumption that made its measurements consistent (if any).
struct ExplainedRun {
  Scenario scenario;
  ScenarioResult result;
  bool explained = false;              ///< an assumption was needed
  Assumption chosen;                   ///< when explained: the one used
  std::vector<Assumption> runners_up;  ///< the other consistent ones, best first
  std::string conflict;                ///< when explained: the contradiction under the stated settings
  int tried = 0;                       ///< assumption sets tried
};

/// Evaluates `first` (the scenario of `args`, as the user gave it). When its measurements contradict
/// each other (MeasurementConflict), tries every combination of the assumptions `args` leaves
/// open and keeps the consistent one with the fewest assumptions, then the least unexplained
/// time; MeasurementConflict naming the first contradiction and what was tried when none holds.
/// `as_stated` is `args` with what the scenario file and a pasted command fill in: an assumption
/// it already states is not searched.
ExplainedRun run_explained(Scenario first, const RunArgs& args, const RunArgs& as_stated,
                           const std::function<Scenario(const RunArgs&)>& make);

/// The report lines that say what was assumed and why (empty when nothing was).
std::vector<std::string> explanation_notes(const ExplainedRun& e);

/// The JSON report's `explanation`: what was assumed, the flags that state it, the contradiction
/// it resolves, the runner-up and how many assumption sets were tried.
nlohmann::json explanation_json(const ExplainedRun& e);

}  // namespace specsim
