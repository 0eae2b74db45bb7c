// `specsim calibrate`: measurements in, a hardware profile out. One mode per kind of measurement
// (today: --nccl-tests); each mode reads, fits, and writes a profile load_hardware() accepts.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "calibrate/calibrate_from_replay.h"
#include "calibrate/nccl_tests_fit.h"
#include "calibrate/profile_io.h"
#include "cli_common.h"
#include "commands.h"
#include "cost/nccl_curve_cost.h"
#include "ingest/nccl_tests.h"
#include "ingest/text_lines.h"
#include "scenario/hardware.h"
#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::cli {

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct CalibrateArgs {
  std::string nccl_tests;                  ///< mode: an nccl-tests all_reduce_perf log
  std::vector<std::string> from, holdout;  ///< mode: specsim replay reports (and held-out ones)
  std::string hardware;                    ///< the base profile: GPU:TOPOLOGY or a profile path
  std::string out;
  int world = 0;  ///< which table when a log has several world sizes
};

int mode_nccl_tests(const CalibrateArgs& a) {
  const std::string text = ingest::read_text(a.nccl_tests, "--nccl-tests");
  const ingest::NcclTestsLog log = ingest::parse_nccl_tests(text, a.nccl_tests);
  int world = a.world;
  const auto points = allreduce_points(log, world, a.nccl_tests);
  const std::string source = fmt::format(
      "specsim calibrate --nccl-tests {} on {}: piecewise weighted least squares of time = lat + bytes/algbw over "
      "{} sizes {:.0f}..{:.0f} B (mean of out-of-place and in-place), world {}, tolerance {:.0f}% per range",
      fs::path(a.nccl_tests).filename().string(), utc_date_today(), points.size(), points.front().bytes,
      points.back().bytes, world, kNcclFitTolerance * 100);
  const NcclFit fit = fit_allreduce_curve(points, world, source);
  // A flat or falling curve fits no bandwidth (busbw 0 or below, a negative latency): refused,
  // not written as a profile that would model an all-reduce of any size as free.
  for (const auto& p : fit.pieces)
    if (!(p.busbw_gbps > 0) || !std::isfinite(p.busbw_gbps) || !(p.lat_us >= 0) || !std::isfinite(p.lat_us))
      throw InputError(fmt::format("degenerate fit over {:.0f}..{:.0f} B (busbw {:g} GB/s, latency {:g} us): the "
                                   "times do not grow with the size",
                                   p.min_bytes, p.max_bytes, p.busbw_gbps, p.lat_us),
                       "--nccl-tests " + a.nccl_tests);

  json profile = base_profile_json(a.hardware);
  json& topo = profile["topology"];
  topo["nccl_fit"] = nccl_fit_json(fit);
  topo["description"] = topo.value("description", "") + " | all-reduce calibrated from " + a.nccl_tests;
  profile["calibration"] = {{"mode", "nccl-tests"},
                            {"log", a.nccl_tests},
                            {"base", a.hardware},
                            {"date", utc_date_today()},
                            {"max_relative_error", max_relative_error(fit, points)}};
  // Refuse to write what load_hardware would refuse to read.
  gpu_from_json(profile["gpu"], a.out + ": gpu");
  const TopologyProfile t = topology_from_json(topo, a.out + ": topology");
  if (world > t.max_gpus)
    throw InputError(fmt::format("the log has {} ranks but topology {} holds at most {}", world, t.name, t.max_gpus),
                     "--hardware");
  write_file_atomic(a.out, profile.dump(2) + "\n", "-o");

  fmt::print("nccl-tests log {}: {} tables, {} rows, {} comment lines, {} unknown lines skipped\n", a.nccl_tests,
             log.tables.size(), log.data_lines, log.comment_lines, log.unknown_lines);
  fmt::print("all-reduce at world {}: {} sizes, fitted in {} ranges (max error {:.1f}%)\n", world, points.size(),
             fit.pieces.size(), 100 * max_relative_error(fit, points));
  fmt::print("  {:>12} {:>12} {:>10} {:>12} {:>12}\n", "min_bytes", "max_bytes", "lat_us", "busbw_GB/s", "algbw_GB/s");
  for (const auto& p : fit.pieces)
    fmt::print("  {:>12.0f} {:>12.0f} {:>10.2f} {:>12.2f} {:>12.2f}\n", p.min_bytes, p.max_bytes, p.lat_us,
               p.busbw_gbps, nccl_fit_algbw_gbps(p, fit.world));
  fmt::print("wrote {} (use: specsim run --hardware {} --tp-size {} --allreduce nccl)\n", a.out, a.out, world);
  return kExitOk;
}

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  CLI::App app{"specsim calibrate: fit a hardware profile to measurements"};
  app.name("specsim calibrate");
  CalibrateArgs a;
  app.add_option("--nccl-tests", a.nccl_tests, "mode: an nccl-tests all_reduce_perf log (several tables allowed)");
  app.add_option("--hardware", a.hardware, "the base profile: GPU:TOPOLOGY or a profile JSON path")->required();
  app.add_option("-o,--output", a.out, "the profile JSON to write")->required();
  app.add_option("--from", a.from,
                 "mode: specsim replay -o reports (repeatable): fit the compute efficiencies (and the all-reduce model "
                 "when several GPUs ran)");
  app.add_option("--holdout", a.holdout, "with --from: replay reports predicted, not fitted (repeatable)");
  app.add_option("--world", a.world, "the world size to fit when the log holds several");
  return guarded(app, argc, argv, [&] {
    std::vector<std::string> inputs = {a.nccl_tests, a.hardware};
    inputs.insert(inputs.end(), a.from.begin(), a.from.end());
    inputs.insert(inputs.end(), a.holdout.begin(), a.holdout.end());
    check_outputs({{a.out, "-o"}}, inputs);
    if (!a.nccl_tests.empty() && !a.from.empty())
      throw InputError("give one mode: --nccl-tests or --from", "specsim calibrate");
    if (!a.from.empty()) return calibrate_from_replay(a.from, a.out, a.hardware, a.holdout, std::cout);
    if (!a.holdout.empty()) throw InputError("--holdout needs --from", "--holdout");
    if (!a.nccl_tests.empty()) return mode_nccl_tests(a);
    throw InputError("nothing to calibrate from: give --nccl-tests LOG or --from REPLAY.json", "specsim calibrate");
  });
}

}  // namespace specsim::cli
