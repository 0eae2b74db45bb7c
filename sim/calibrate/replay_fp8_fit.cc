#include "calibrate/replay_fp8_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>

#include "calibrate/bounded_lsq.h"
#include "calibrate/profile_io.h"
#include "scenario/hardware.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

using nlohmann::json;

ReplayFp8Fit fit_replay_fp8(const std::vector<ReplayFp8Row>& rows, const std::string& source) {
  if (rows.size() < std::size_t(kReplayFp8Terms))
    throw InputError(
        fmt::format("{} rows fit {} terms: give at least {}", rows.size(), kReplayFp8Terms, kReplayFp8Terms), "rows");
  // relative error: each row divided by its own time, so a 4 us GEMM counts as much as a 400 us one
  Eigen::MatrixXd A(Eigen::Index(rows.size()), kReplayFp8Terms);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(Eigen::Index(rows.size()));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (!(rows[r].us > 0) || !std::isfinite(rows[r].us))
      throw InputError(fmt::format("time {} us is not a positive number", rows[r].us),
                       "rows[" + std::to_string(r) + "]");
    const auto t = replay_fp8_terms(rows[r].dims);
    for (int i = 0; i < kReplayFp8Terms; ++i) A(Eigen::Index(r), i) = t[std::size_t(i)] / rows[r].us;
  }
  std::vector<BoundedParam> ps;
  for (int i = 0; i < kReplayFp8Terms; ++i) ps.push_back(bounded_param(kReplayFp8Keys[std::size_t(i)], 0, 0, 1e6));
  for (int i = 0; i < kReplayFp8Terms; ++i)
    if (A.col(i).norm() == 0) hold(ps[std::size_t(i)], "no row constrains it");
  solve_bounded(A, b, ps);
  ReplayFp8Fit fit;
  fit.kernel.present = true;
  fit.kernel.source = source;
  for (int i = 0; i < kReplayFp8Terms; ++i) fit.kernel.coef[std::size_t(i)] = ps[std::size_t(i)].value;
  fit.held = held_notes(ps);
  std::vector<double> errs;
  for (const auto& r : rows) {
    const double e = 100 * std::abs(replay_fp8_us(fit.kernel, r.dims) - r.us) / r.us;
    errs.push_back(e);
    if (e >= fit.worst_pct) fit.worst_pct = e, fit.worst_row = r.shape;
  }
  std::sort(errs.begin(), errs.end());
  fit.points = int(rows.size());
  fit.median_pct = errs[errs.size() / 2];
  return fit;
}

namespace {
// The rows of a parsed specsim-gemmbench --json file (`path` names it in errors).
std::vector<ReplayFp8Row> rows_of_bench(const json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("kind") || j["kind"] != "specsim-gemmbench" || !j.contains("rows") ||
      !j["rows"].is_array())
    throw InputError("not a specsim-gemmbench --json file (kind \"specsim-gemmbench\" with rows)",
                     "--gemmbench " + path);
  std::vector<ReplayFp8Row> rows;
  for (std::size_t i = 0; i < j["rows"].size(); ++i) {
    const json& r = j["rows"][i];
    const std::string at = fmt::format("--gemmbench {}: rows[{}]", path, i);
    const auto whole = [&](const char* key) {
      const double v = json_double(r, key, at);
      if (v < 1 || v > 1e9 || v != std::floor(v)) throw InputError("must be a whole number >= 1", at + "." + key);
      return std::int64_t(v);
    };
    ReplayFp8Row row;
    row.shape = fmt::format("{} M={} x{}", json_string(r, "shape", at), whole("m"), whole("batch"));
    row.dims = {whole("m"), whole("n"), whole("k"), whole("batch")};
    row.us = json_double(r, "block_fp8_us", at);
    if (!(row.us > 0) || !std::isfinite(row.us)) throw InputError("must be > 0", at + ".block_fp8_us");
    rows.push_back(row);
  }
  return rows;
}
}  // namespace

std::vector<ReplayFp8Row> gemmbench_rows(const std::string& path) { return rows_of_bench(read_json_file(path), path); }

void calibrate_from_gemmbench(const std::string& gemmbench_json, const std::string& out_profile,
                              const std::string& hardware, std::ostream& out) {
  const json bench = read_json_file(gemmbench_json);  // read once: its rows, device and date
  const auto rows = rows_of_bench(bench, gemmbench_json);
  const std::string source = fmt::format(
      "specsim calibrate --gemmbench {} on {}: least squares of the relative error over {} rows of "
      "specsim-gemmbench (device {}, {})",
      std::filesystem::path(gemmbench_json).filename().string(), utc_date_today(), rows.size(),
      bench.value("device", "?"), bench.value("date", "?"));
  const ReplayFp8Fit fit = fit_replay_fp8(rows, source);
  json block = {{"source", source}};
  for (int i = 0; i < kReplayFp8Terms; ++i) block[kReplayFp8Keys[std::size_t(i)]] = fit.kernel.coef[std::size_t(i)];
  json profile = base_profile_json(hardware);
  profile["gpu"]["replay_block_fp8"] = block;
  gpu_from_json(profile["gpu"], out_profile + ": gpu");  // refuse to write what load_hardware would refuse
  write_file_atomic(out_profile, dump_json(profile) + "\n", "-o");
  out << fmt::format("replay block-fp8 kernel: {} rows fitted, median error {:.1f}%, worst {:.1f}% ({})\n", fit.points,
                     fit.median_pct, fit.worst_pct, fit.worst_row);
  for (int i = 0; i < kReplayFp8Terms; ++i)
    out << fmt::format("  {:<18} {:.4f}\n", kReplayFp8Keys[std::size_t(i)], fit.kernel.coef[std::size_t(i)]);
  for (const auto& h : fit.held) out << "note: " << h << "\n";
  out << fmt::format("{:<34} {:>8} {:>9} {:>7}\n", "row", "meas us", "fit us", "err");
  for (const auto& r : rows) {
    const double p = replay_fp8_us(fit.kernel, r.dims);
    out << fmt::format("{:<34} {:>8.2f} {:>9.2f} {:>+6.1f}%\n", r.shape, r.us, p, 100 * (p - r.us) / r.us);
  }
  out << "wrote " << out_profile << " (gpu.replay_block_fp8)\n";
}

}  // namespace specsim
