#pragma once
// `specsim calibrate --from REPLAY.json`: read the reports once, fit the compute model and (for
// multi-GPU reports) the all-reduce model, write a new profile, print before -> after.
#include <iosfwd>
#include <string>
#include <vector>

namespace specsim {

/// The whole mode: load `replay_jsons`, fit against the `hardware` profile (GPU:TOPOLOGY or a
/// path), write `out_profile` (loadable by load_hardware), and print before/after errors for the
/// fitted points and for the held-out `holdout_jsons` to `out`. Returns the exit code (0).
int calibrate_from_replay(const std::vector<std::string>& replay_jsons, const std::string& out_profile,
                          const std::string& hardware, const std::vector<std::string>& holdout_jsons,
                          std::ostream& out);

}  // namespace specsim
