#include "calibrate/fit_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "calibrate/replay_fit.h"
#include "util/error.h"

namespace specsim {

namespace {

// Within one part in a billion: what a report's printed times cannot tell apart.
bool all_equal(const std::vector<double>& v) {
  if (v.size() < 2) return false;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *hi - *lo <= 1e-9 * std::abs(*hi);
}

// A phase's op timings (eager events) times their repeats against the phase's own time: within
// 0.6..1.8x in every shipped report (launch gaps make it above 1, collectives measured with the
// phase below); beyond 10x a repeat count or a time is wrong.
constexpr double kMaxOpSumRatio = 10;

std::string files_of(const std::vector<ReplayPoint>& points) {
  std::set<std::string> files;
  for (const auto& p : points) files.insert(p.file);
  return fmt::format("--from {}", fmt::join(files, " "));
}

}  // namespace

void check_compute_fit_data(const std::vector<ReplayPoint>& points) {
  std::vector<double> op_us, graph_us;
  std::set<std::string> graph_labels;
  using Shape = std::tuple<int, int, double, double, double, double, double, double, double>;
  std::set<Shape> shapes;
  for (const auto& p : points) {
    double sum_us = 0;
    for (const auto& o : p.phase.ops) {
      op_us.push_back(o.measured_us);
      sum_us += double(o.repeat) * o.measured_us;
      shapes.insert(
          {int(o.op.kind), int(o.ran_dtype), o.op.m, o.op.n, o.op.k, o.op.batch, o.op.experts, o.op.flops, o.op.bytes});
    }
    const double ratio = sum_us / p.phase.us;
    if (ratio > kMaxOpSumRatio || ratio < 1 / kMaxOpSumRatio)
      throw InputError(fmt::format("its op timings times their repeat counts add up to {:.4g} us, {:.3g}x the "
                                   "phase's measured {:.4g} us: a repeat count or a time is wrong",
                                   sum_us, ratio, p.phase.us),
                       p.file + ": " + p.label);
    if (p.phase.graph) graph_us.push_back(p.phase.us), graph_labels.insert(p.label);
  }
  if (all_equal(op_us))
    throw InputError(fmt::format("all {} op timings are {:.4g} us whatever the op: a flat measurement leaves the "
                                 "fit nothing to fit (re-run specsim replay)",
                                 op_us.size(), op_us.front()),
                     files_of(points));
  if (shapes.size() == 1)
    throw InputError(fmt::format("all {} ops have one shape: nothing separates the GEMM, attention and memory "
                                 "terms (replay a whole model)",
                                 op_us.size()),
                     files_of(points));
  if (graph_labels.size() > 1 && all_equal(graph_us))
    throw InputError(fmt::format("all {} phases took {:.4g} us whatever their setting: a flat measurement leaves the "
                                 "fit nothing to fit (re-run specsim replay)",
                                 graph_us.size(), graph_us.front()),
                     files_of(points));
}

void check_allreduce_fit_data(const std::vector<AllReducePoint>& points) {
  std::vector<double> us;
  std::set<double> moved;
  std::set<std::string> files;
  for (const auto& p : points) us.push_back(p.measured_us), moved.insert(p.calls * p.bytes), files.insert(p.file);
  if (moved.size() > 1 && all_equal(us))
    throw InputError(fmt::format("all {} all-reduce graphs took {:.4g} us though they move from {:.0f} to {:.0f} B: a "
                                 "flat measurement leaves the all-reduce fit nothing to fit (re-run specsim replay)",
                                 us.size(), us.front(), *moved.begin(), *moved.rbegin()),
                     fmt::format("--from {}: phases[].measured.allreduce_us", fmt::join(files, " ")));
}

void check_compute_fit_quality(const std::vector<ReplayPoint>& points, const Hardware& cal) {
  double worst = 0;
  const ReplayPoint* at = nullptr;
  for (const auto& p : points) {
    const double err = std::abs(100 * (predict_point_us(p, cal) - p.phase.us) / p.phase.us);
    if (!(err <= worst)) worst = err, at = &p;  // NaN too
  }
  if (at && !(worst <= kMaxSelfFitErrorPct))
    throw InputError(fmt::format("the fitted profile still misses {} by {:.0f}% (more than {:.0f}%): the "
                                 "measurements do not follow the compute model (shared GPUs, inconsistent times "
                                 "or repeat counts?); nothing written",
                                 at->label, worst, kMaxSelfFitErrorPct),
                     at->file);
}

void check_allreduce_fit_quality(const AllReduceFit& f) {
  if (f.worst_after_pct <= kMaxSelfFitErrorPct || f.points.empty()) return;
  std::set<std::string> files;
  for (const auto& p : f.points) files.insert(p.file);
  throw InputError(fmt::format("the fitted all-reduce model still misses its points by up to {:.0f}% (more than "
                               "{:.0f}%): the measured all-reduces do not follow the model; nothing written",
                               f.worst_after_pct, kMaxSelfFitErrorPct),
                   fmt::format("--from {}", fmt::join(files, " ")));
}

}  // namespace specsim
