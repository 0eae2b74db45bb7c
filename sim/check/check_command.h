#pragma once
// `specsim check` as one call: the baseline read, the scenario rerun (analytic, or replayed on the
// GPU with --replay), the figures compared and the verdict written. The GPU work comes from the
// caller (kernels/replay), since sim/ never reaches kernels/.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "check/check.h"
#include "plan/allreduce_cases.h"
#include "plan/replay_measurement.h"
#include "scenario/resolve.h"

namespace specsim::check {

/// `specsim check`'s flags beyond the scenario's.
struct CheckRequest {
  std::string baseline;            ///< --baseline
  std::string tolerance = "3%";    ///< --tolerance
  std::string gate = "tok_per_s";  ///< --gate
  std::string accept_from;         ///< --accept-from
  bool json = false;               ///< --json
  bool allow_different = false;    ///< --allow-different-settings
  bool replay = false;             ///< --replay
  int iters = 50, warmup = 10;     ///< --replay: timed and untimed graph replays per phase
  std::string junit;               ///< --junit: JUnit XML of the rows and the verdict
  /// The run flags given beside --baseline, as typed ("--batch-size 4"): the change under test
  /// when the baseline carries its scenario.
  std::vector<std::string> changes;
};

/// The GPU work of `check --replay` (kernels/replay provides each).
struct ReplayGpu {
  std::function<int()> device_count;
  std::function<std::vector<VerifyResult>(const std::vector<AllReduceCase>&, int tp,
                                          const std::vector<AllReduceChoice>&)>
      verify_allreduces;
  std::function<ReplayMeasurement(const CyclePlan&, int iters, int warmup)> replay_phases;  ///< phase us only
};

/// The diff table and the verdict line on `out`; true when a row regressed. `what` names the rows.
bool write_verdict(const std::vector<CheckRow>& rows, double tolerance, const std::string& what,
                   const std::string& ok_prefix, std::ostream& out);

/// Runs the check: the rows and the verdict on `out`, a note on `err` when different inputs are
/// compared on purpose. True when it failed (a regression, or an all-reduce verified wrong).
/// `gpu` null: this build has no GPU replay, and --replay is refused. InputError on bad input.
bool run_check(RunArgs& args, const CheckRequest& q, const ReplayGpu* gpu, std::ostream& out, std::ostream& err);

}  // namespace specsim::check
