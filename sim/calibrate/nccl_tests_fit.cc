#include "calibrate/nccl_tests_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibrate/bounded_lsq.h"
#include "cost/bus_bandwidth.h"
#include "cost/nccl_curve_cost.h"
#include "util/error.h"

namespace specsim {

std::vector<NcclPoint> allreduce_points(const ingest::NcclTestsLog& log, int& world, const std::string& file) {
  std::set<int> worlds;
  for (const auto& t : log.tables)
    if (t.collective.empty() || t.collective.find("all_reduce") != std::string::npos) worlds.insert(t.world());
  if (worlds.empty()) throw InputError("no all_reduce_perf table in the log", file);
  if (world == 0) {
    if (worlds.size() > 1)
      throw InputError(fmt::format("the log holds all-reduce tables at world sizes {}: pick one with --world",
                                   fmt::join(worlds, ", ")),
                       "--world");
    world = *worlds.begin();
  } else if (!worlds.count(world)) {
    throw InputError(
        fmt::format("no all-reduce table at world size {} (the log has {})", world, fmt::join(worlds, ", ")),
        "--world");
  }
  if (world < 2) throw InputError("an all-reduce over 1 rank moves nothing: the log must be from 2 or more GPUs", file);
  std::vector<NcclPoint> samples;
  for (const auto& t : log.tables) {
    if (t.world() != world || !(t.collective.empty() || t.collective.find("all_reduce") != std::string::npos)) continue;
    for (const auto& r : t.rows) {
      samples.push_back({r.bytes, r.oop_us});
      if (r.has_in_place) samples.push_back({r.bytes, r.ip_us});
    }
  }
  return mean_per_size(samples);
}

std::vector<NcclPoint> mean_per_size(const std::vector<NcclPoint>& samples) {
  std::map<double, std::pair<double, int>> by_size;  // bytes -> (sum us, samples)
  for (const auto& p : samples) {
    auto& s = by_size[p.bytes];
    s.first += p.us, ++s.second;
  }
  std::vector<NcclPoint> pts;
  for (const auto& [bytes, s] : by_size) pts.push_back({bytes, s.first / s.second});
  return pts;
}

namespace {

// Weighted least squares (weights 1/us: relative error) of us = lat + slope * bytes, with both
// coefficients kept >= 0 (a negative latency or bandwidth means nothing).
struct Line {
  double lat = 0, slope = 0;  // us, us per byte
};

Line fit_line(const std::vector<NcclPoint>& p, std::size_t lo, std::size_t hi) {
  const auto n = static_cast<Eigen::Index>(hi - lo + 1);
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& q = p[lo + static_cast<std::size_t>(i)];
    a(i, 0) = 1.0 / q.us;
    a(i, 1) = q.bytes / q.us;
  }
  Line l;
  if (n >= 2) {
    const Eigen::VectorXd x = least_squares_over(a, b, {0, 1}, Eigen::Vector2d::Zero(), /*unit_columns=*/false);
    l = {x(0), x(1)};
  }
  // A bound that binds: the other coefficient alone, by projection.
  if (n < 2 || l.slope < 0) {  // flat range: latency only
    l.slope = 0;
    l.lat = a.col(0).dot(b) / a.col(0).squaredNorm();
  } else if (l.lat < 0) {  // pure bandwidth
    l.lat = 0;
    l.slope = a.col(1).dot(b) / a.col(1).squaredNorm();
  }
  return l;
}

double worst(const std::vector<NcclPoint>& p, std::size_t lo, std::size_t hi, const Line& l) {
  double w = 0;
  for (std::size_t i = lo; i <= hi; ++i) w = std::max(w, std::abs(l.lat + l.slope * p[i].bytes - p[i].us) / p[i].us);
  return w;
}

}  // namespace

NcclFit fit_allreduce_curve(const std::vector<NcclPoint>& p, int world, const std::string& source, double tolerance) {
  if (p.empty()) throw InputError("no all-reduce sizes to fit", "--nccl-tests");
  NcclFit f;
  f.world = world;
  f.source = source;
  std::size_t lo = 0;
  while (true) {
    // Grow the range while one line fits every point in it within the tolerance.
    std::size_t hi = std::min(lo + 1, p.size() - 1);
    for (std::size_t j = hi + 1; j < p.size(); ++j) {
      if (worst(p, lo, j, fit_line(p, lo, j)) > tolerance) break;
      hi = j;
    }
    const Line l = fit_line(p, lo, hi);
    // slope in us/byte -> algbw GB/s -> busbw.
    const double busbw = l.slope > 0 ? allreduce_busbw_gbps(gbps_of_us_per_byte(l.slope), world) : 0.0;
    f.pieces.push_back({p[lo].bytes, p[hi].bytes, l.lat, busbw});
    if (hi + 1 >= p.size()) break;
    lo = hi;  // adjacent ranges share their boundary size
  }
  return f;
}

std::string latency_only_note(const std::vector<NcclPoint>& p, const std::string& where) {
  if (p.back().bytes >= kBandwidthBoundBytes)
    throw InputError(fmt::format("degenerate fit over {:.0f}..{:.0f} B: the times do not grow with the size at all, "
                                 "even at MiB sizes, so no bandwidth can be fitted (check the log's time columns)",
                                 p.front().bytes, p.back().bytes),
                     where);
  const std::string sizes = p.size() == 1 ? fmt::format("one size ({:.0f} B)", p.front().bytes)
                                          : fmt::format("sizes {:.0f}..{:.0f} B", p.front().bytes, p.back().bytes);
  return fmt::format(
      "latency only: the table holds {}, all latency-bound, so it prices all-reduces of at most "
      "{:.0f} B; larger ones keep the hardware profile's NCCL model",
      sizes, p.back().bytes);
}

double max_relative_error(const NcclFit& fit, const std::vector<NcclPoint>& points) {
  double w = 0;
  for (const auto& q : points) w = std::max(w, std::abs(nccl_fit_us(fit, q.bytes) - q.us) / q.us);
  return w;
}

}  // namespace specsim
