#include "calibrate/calibrate_from_replay.h"

#include <fmt/format.h>

#include <ostream>

#include "calibrate/allreduce_fit.h"
#include "calibrate/fit_checks.h"
#include "calibrate/fit_profile_writer.h"
#include "calibrate/fit_summary.h"
#include "calibrate/profile_io.h"
#include "calibrate/replay_fit.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

int calibrate_from_replay(const std::vector<std::string>& replay_jsons, const std::string& out_profile,
                          const std::string& hardware, const std::vector<std::string>& holdout_jsons,
                          std::ostream& out) {
  if (out_profile.empty()) throw InputError("give the profile to write", "-o");
  const Hardware base = load_hardware(hardware, 1);
  // Each report is read once; the compute fit and the all-reduce fit both take it from here.
  const auto from_reports = read_replay_reports(replay_jsons), held_reports = read_replay_reports(holdout_jsons);
  // Multi-GPU phases: the compute fit sees them without their collectives (replay_reports.h).
  const auto raw_points = replay_points(from_reports, "--from");
  check_compute_fit_data(raw_points);  // a flat or inconsistent measurement is refused, not fitted
  const auto fit_points = compute_share(raw_points, base.gpu);
  const auto held = held_reports.empty() ? std::vector<ReplayPoint>{}
                                         : compute_share(replay_points(held_reports, "--holdout"), base.gpu);
  const ReplayFit fit = fit_replay(fit_points, base.gpu);
  Hardware cal = base;
  cal.gpu = apply_fit(base.gpu, fit);

  nlohmann::json profile = base_profile_json(hardware);
  const std::string device = from_reports.front().json.value("device", "an unnamed GPU");
  write_compute_fit(profile, cal.gpu, fit, replay_jsons, device, hardware);
  const AllReduceCalibration ar = calibrate_allreduce(from_reports, held_reports, base, cal, hardware, profile);
  check_compute_fit_quality(fit_points, cal);            // after the all-reduce input checks: theirs say more
  gpu_from_json(profile["gpu"], out_profile + ": gpu");  // refuse to write what load_hardware would refuse
  topology_from_json(profile["topology"], out_profile + ": topology");
  write_file_atomic(out_profile, dump_json(profile) + "\n", "-o");

  print_compute_fit(fit, base, cal, fit_points, held, out);
  print_allreduce_calibration(ar, out);  // multi-GPU reports only
  out << fmt::format("\nwrote {} (use: specsim run --hardware {})\n", out_profile, out_profile);
  return 0;
}

}  // namespace specsim
