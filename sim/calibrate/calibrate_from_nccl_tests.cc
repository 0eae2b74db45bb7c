#include "calibrate/calibrate_from_nccl_tests.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <ostream>

#include "calibrate/nccl_tests_fit.h"
#include "calibrate/profile_io.h"
#include "cost/nccl_curve_cost.h"
#include "ingest/nccl_tests.h"
#include "ingest/points_file.h"
#include "ingest/text_lines.h"
#include "scenario/hardware.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

namespace fs = std::filesystem;
using nlohmann::json;

void calibrate_from_nccl_tests(const std::string& nccl_tests, const std::string& out_profile,
                               const std::string& hardware, int world_asked, std::ostream& out) {
  const std::string text = ingest::read_text(nccl_tests, "--nccl-tests");
  // A points file (a published table, `bytes time_us`) does not say its ranks; a log does.
  const bool points_file = ingest::is_points_file(text);
  int world = world_asked;
  ingest::NcclTestsLog log;
  std::vector<NcclPoint> points;
  if (points_file) {
    if (world <= 0)
      throw InputError(fmt::format("{} is a points file (bytes, time_us), which does not say how many ranks ran: "
                                   "give --world N",
                                   nccl_tests),
                       "--world");
    std::vector<NcclPoint> samples;  // a size printed twice: its mean
    for (const auto& p : ingest::parse_points_file(text, nccl_tests)) samples.push_back({p.bytes, p.us});
    points = mean_per_size(samples);
  } else {
    log = ingest::parse_nccl_tests(text, nccl_tests);
    points = allreduce_points(log, world, nccl_tests);
  }
  const std::string source = fmt::format(
      "specsim calibrate --nccl-tests {} on {}: piecewise weighted least squares of time = lat + bytes/algbw over "
      "{} sizes {:.0f}..{:.0f} B ({}), world {}{}, tolerance {:.0f}% per range",
      fs::path(nccl_tests).filename().string(), utc_date_today(), points.size(), points.front().bytes,
      points.back().bytes, points_file ? "a points file's times" : "mean of out-of-place and in-place", world,
      points_file ? " (given: --world)" : "", kNcclFitTolerance * 100);
  NcclFit fit = fit_allreduce_curve(points, world, source);
  // A range whose times do not grow with the size (every real log is latency-bound at small
  // sizes) fits as latency only (busbw 0). A negative or non-finite coefficient is refused, and so
  // is a curve without bandwidth that reaches MiB sizes: it would model large all-reduces as free.
  bool any_bandwidth = false;
  for (const auto& p : fit.pieces) {
    if (!(p.busbw_gbps >= 0) || !std::isfinite(p.busbw_gbps) || !(p.lat_us >= 0) || !std::isfinite(p.lat_us))
      throw InputError(fmt::format("degenerate fit over {:.0f}..{:.0f} B (busbw {:g} GB/s, latency {:g} us): "
                                   "check the log's time columns",
                                   p.min_bytes, p.max_bytes, p.busbw_gbps, p.lat_us),
                       "--nccl-tests " + nccl_tests);
    any_bandwidth = any_bandwidth || p.busbw_gbps > 0;
  }
  const std::string latency_note = any_bandwidth ? "" : latency_only_note(points, "--nccl-tests " + nccl_tests);
  if (!latency_note.empty()) fit.source += "; " + latency_note;
  const std::string cut_note =
      log.cut_lines.empty()
          ? ""
          : fmt::format(
                "{} row(s) cut mid-line after their out-of-place columns (line {}): read without their "
                "in-place columns",
                log.cut_lines.size(), fmt::join(log.cut_lines, ", "));
  if (!cut_note.empty()) fit.source += "; " + cut_note;

  json profile = base_profile_json(hardware);
  json& topo = profile["topology"];
  topo["nccl_fit"] = nccl_fit_json(fit);
  topo["description"] = topo.value("description", "") + " | all-reduce calibrated from " + nccl_tests;
  profile["calibration"] = {{"mode", "nccl-tests"},
                            {"log", nccl_tests},
                            {"base", hardware},
                            {"date", utc_date_today()},
                            {"max_relative_error", max_relative_error(fit, points)}};
  // Refuse to write what load_hardware would refuse to read.
  gpu_from_json(profile["gpu"], out_profile + ": gpu");
  const TopologyProfile t = topology_from_json(topo, out_profile + ": topology");
  if (world > t.max_gpus)
    throw InputError(fmt::format("the log has {} ranks but topology {} holds at most {}", world, t.name, t.max_gpus),
                     "--hardware");
  write_file_atomic(out_profile, dump_json(profile) + "\n", "-o");

  if (points_file)
    out << fmt::format("points file {}: {} sizes (bytes, time_us), world {} as given (--world)\n", nccl_tests,
                       points.size(), world);
  else
    out << fmt::format("nccl-tests log {}: {} tables, {} rows, {} comment lines, {} unknown lines skipped\n",
                       nccl_tests, log.tables.size(), log.data_lines, log.comment_lines, log.unknown_lines);
  out << fmt::format("all-reduce at world {}: {} sizes, fitted in {} ranges (max error {:.1f}%)\n", world,
                     points.size(), fit.pieces.size(), 100 * max_relative_error(fit, points));
  if (!cut_note.empty()) out << "note: " << cut_note << "\n";
  if (!latency_note.empty()) out << "note: " << latency_note << "\n";
  // A range's line is kept >= 0 in latency and bandwidth: times that fall with the size (an outlier
  // row, a table of two runs) cannot be followed, and the fit misses them.
  // (A range's shared end sizes can overshoot a little; twice the aim is a miss.)
  if (const double worst = max_relative_error(fit, points); worst > 2 * kNcclFitTolerance)
    out << fmt::format(
        "warning: the fit misses some sizes by up to {:.1f}%, over twice the {:.0f}% each range aims at: times "
        "that fall as the size grows (an outlier row?) cannot be followed; check the rows around the worst size\n",
        100 * worst, 100 * kNcclFitTolerance);
  out << fmt::format("  {:>12} {:>12} {:>10} {:>12} {:>12}\n", "min_bytes", "max_bytes", "lat_us", "busbw_GB/s",
                     "algbw_GB/s");
  for (const auto& p : fit.pieces)
    out << fmt::format("  {:>12.0f} {:>12.0f} {:>10.2f} {:>12.2f} {:>12.2f}\n", p.min_bytes, p.max_bytes, p.lat_us,
                       p.busbw_gbps, nccl_fit_algbw_gbps(p, fit.world));
  out << fmt::format("wrote {} (use: specsim run --hardware {} --tp-size {} --allreduce nccl)\n", out_profile,
                     out_profile, world);
}

}  // namespace specsim
