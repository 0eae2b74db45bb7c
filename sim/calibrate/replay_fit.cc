#include "calibrate/replay_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "calibrate/bounded_lsq.h"
#include "cost/compute_cost.h"
#include "engine/op_cost.h"
#include "util/error.h"

namespace specsim {

namespace {

// The fitted vector: inverse efficiencies (time multipliers), the per-kernel floor and the
// GEMM and attention kernels' fixed costs.
enum Param {
  kGemmCompute,
  kGemmMemory,
  kAttnMemory,
  kElemMemory,
  kFloor,
  kGemmFixed,
  kAttnCompute,
  kAttnFixed,
  kSwitch,
  kNumParams
};
using Theta = std::array<double, kNumParams>;
// The profile field of each parameter.
constexpr std::pair<const char*, double GpuProfile::*> kFields[kNumParams] = {
    {"gemm_compute_efficiency", &GpuProfile::gemm_compute_efficiency},
    {"gemm_memory_efficiency", &GpuProfile::gemm_memory_efficiency},
    {"attention_memory_efficiency", &GpuProfile::attention_memory_efficiency},
    {"elementwise_memory_efficiency", &GpuProfile::elementwise_memory_efficiency},
    {"kernel_min_us", &GpuProfile::kernel_min_us},
    {"gemm_fixed_us", &GpuProfile::gemm_fixed_us},
    {"attention_compute_efficiency", &GpuProfile::attention_compute_efficiency},
    {"attention_fixed_us", &GpuProfile::attention_fixed_us},
    {"kernel_switch_us", &GpuProfile::kernel_switch_us}};
bool is_time(int p) { return p == kFloor || p == kGemmFixed || p == kAttnFixed || p == kSwitch; }  // us
// Rows: each graph phase (weight 1, relative error), each op class alone in a graph (weight
// kClassRowWeight), and each op's eager event time (kOpRowWeight: eager events carry launch gaps
// a graph does not have, so they only pin what the graph rows cannot).
constexpr double kClassRowWeight = 0.5, kOpRowWeight = 0.02;
constexpr double kMinEfficiency = 0.3, kMaxFloorUs = 20.0;  // below 0.3 a fit is mimicking a missing term
// Attention's tensor-core work runs in 16-row tiles with a softmax between the MMAs: far below
// a GEMM's rate (0.15 on the H200), so its lower bound is lower.
constexpr double kMinAttnComputeEfficiency = 0.05;
double min_efficiency(int p) { return p == kAttnCompute ? kMinAttnComputeEfficiency : kMinEfficiency; }
constexpr int kMaxIterations = 50;

// The parameters of each roofline class (cost/compute_cost.h): GEMMs and attention have their own
// compute efficiencies, so a slow attention kernel does not drag the GEMMs' down with it.
struct ClassParams {
  Param compute = kNumParams, mem = kElemMemory, fixed = kNumParams;  // kNumParams: none
};
ClassParams params_of(RooflineClass c) {
  switch (c) {
    case RooflineClass::Gemm: return {kGemmCompute, kGemmMemory, kGemmFixed};
    case RooflineClass::Attention: return {kAttnCompute, kAttnMemory, kAttnFixed};
    case RooflineClass::Memory: break;
  }
  return {};
}

// The coefficient row of the term of compute_us that binds under `th`, and which term it is: the
// FLOP time at full peak into the class's compute parameter, the byte time at full bandwidth into
// its memory parameter (each with its fixed cost), or the floor.
std::pair<Eigen::Matrix<double, 1, kNumParams>, int> binding_row(const Op& op, const GpuProfile& g, const Theta& th) {
  const RooflineTerms t = roofline_terms(op, g);
  const ClassParams k = params_of(t.cls);
  const double xc = t.flop_us_at_peak(), xm = t.byte_us_at_peak();
  const double fixed = k.fixed < kNumParams ? th[k.fixed] : 0.0;
  const double c = k.compute < kNumParams ? th[k.compute] * xc : 0.0, m = th[k.mem] * xm;
  Eigen::Matrix<double, 1, kNumParams> row = Eigen::Matrix<double, 1, kNumParams>::Zero();
  switch (roofline_bound(fixed, c, m, th[kFloor])) {
    case RooflineBound::Compute:
      row(k.compute) = xc;
      if (k.fixed < kNumParams) row(k.fixed) = 1.0;
      return {row, 0};
    case RooflineBound::Memory:
      row(k.mem) = xm;
      if (k.fixed < kNumParams) row(k.fixed) = 1.0;
      return {row, 1 + k.mem};
    case RooflineBound::Floor: break;
  }
  row(kFloor) = 1.0;
  return {row, 9};
}

Theta theta_of(const GpuProfile& g) {
  Theta th;
  for (int p = 0; p < kNumParams; ++p) th[p] = is_time(p) ? g.*kFields[p].second : 1 / g.*kFields[p].second;
  return th;
}

}  // namespace

ReplayFit fit_replay(const std::vector<ReplayPoint>& points, const GpuProfile& base) {
  Theta th = theta_of(base);
  ReplayFit fit;
  std::vector<int> last_regimes;
  // The same setting replayed again (every verify report also replays the t=1 baseline and the
  // draft phases) is one setting measured n times: its rows weigh 1/sqrt(n) each, so it counts
  // once in the squared error instead of n times.
  std::map<std::string, int> seen;
  for (const auto& pt : points) ++seen[pt.label];
  // Class changes per forward: fixed by the ops, so counted once, not per iteration.
  std::vector<double> switches;
  for (const auto& pt : points) {
    double n = 0;
    for (const auto& b : plan_of(pt.phase).blocks)
      for (std::size_t i = 0; i < b.ops.size(); ++i) n += b.repeat * double(follows_other_class(b, i));
    switches.push_back(n);
  }
  for (int it = 0; it < kMaxIterations; ++it) {
    std::vector<Eigen::Matrix<double, 1, kNumParams>> rows;
    std::vector<double> rhs;
    std::vector<int> regimes;
    fit.phases = fit.ops = 0;
    for (std::size_t k = 0; k < points.size(); ++k) {
      const auto& pt = points[k];
      const auto& ph = pt.phase;
      const double w = 1 / std::sqrt(double(seen[pt.label]));
      Eigen::Matrix<double, 1, kNumParams> sum = Eigen::Matrix<double, 1, kNumParams>::Zero();
      Eigen::Matrix<double, 3, kNumParams> by_class = Eigen::Matrix<double, 3, kNumParams>::Zero();
      for (const auto& om : ph.ops) {
        Op op = om.op;
        op.dtype = om.ran_dtype;
        auto [row, regime] = binding_row(op, base, th);
        regimes.push_back(regime);
        sum += double(om.repeat) * row;
        const OpClass c = op_class(op.kind);
        by_class.row(c == OpClass::Gemm ? 0 : c == OpClass::Attention ? 1 : 2) += double(om.repeat) * row;
        rows.push_back(w * kOpRowWeight / om.measured_us * row);
        rhs.push_back(w * kOpRowWeight);
        ++fit.ops;
      }
      if (!ph.graph) continue;     // eager phases add host-launch waits: not linear in Theta
      sum(kSwitch) = switches[k];  // only the whole forward has class changes: the class rows have none
      const double class_us[3] = {ph.gemm_us, ph.attention_us, ph.other_us};
      for (int c = 0; c < 3; ++c)
        if (class_us[c] > base.graph_launch_us) {
          rows.push_back(w * kClassRowWeight / class_us[c] * by_class.row(c));
          rhs.push_back(w * kClassRowWeight * (class_us[c] - base.graph_launch_us) / class_us[c]);
        }
      const double target = ph.us - base.graph_launch_us;
      if (target <= 0) continue;
      rows.push_back(w * sum / ph.us);
      rhs.push_back(w * target / ph.us);
      ++fit.phases;
    }
    if (rows.empty()) throw InputError("the replay reports hold no ops to fit", "--from");
    Eigen::MatrixXd A(rows.size(), kNumParams);
    Eigen::VectorXd b(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) A.row(Eigen::Index(i)) = rows[i], b(Eigen::Index(i)) = rhs[i];
    // Parameters no row binds keep their value: solve only for the active columns.
    std::vector<int> active;
    for (int c = 0; c < kNumParams; ++c)
      if (A.col(c).norm() > 0) active.push_back(c);
    const Eigen::VectorXd x =
        least_squares_over(A, b, active, Eigen::Map<const Eigen::VectorXd>(th.data(), kNumParams), false);
    fit.clamped.clear();
    for (std::size_t c = 0; c < active.size(); ++c) {
      const int p = active[c];
      double v = x(Eigen::Index(c));
      const char* key = kFields[p].first;
      if (is_time(p)) {
        if (v < 0 || v > kMaxFloorUs)
          fit.clamped.push_back(fmt::format("{} held in [0, {}] (fit gave {:.3g})", key, kMaxFloorUs, v));
        v = std::clamp(v, 0.0, kMaxFloorUs);
      } else {
        if (v < 1.0 || v > 1 / min_efficiency(p))
          fit.clamped.push_back(fmt::format("{} held in [{}, 1] (fit gave {:.3g})", key, min_efficiency(p), 1 / v));
        v = std::clamp(v, 1.0, 1 / min_efficiency(p));
      }
      th[p] = v;
    }
    fit.iterations = it + 1;
    if (regimes == last_regimes) break;  // the binding terms no longer move: a fixed point
    last_regimes = std::move(regimes);
  }
  fit.gemm_compute_efficiency = 1 / th[kGemmCompute];
  fit.gemm_memory_efficiency = 1 / th[kGemmMemory];
  fit.attention_memory_efficiency = 1 / th[kAttnMemory];
  fit.elementwise_memory_efficiency = 1 / th[kElemMemory];
  fit.kernel_min_us = th[kFloor];
  fit.gemm_fixed_us = th[kGemmFixed];
  fit.attention_compute_efficiency = 1 / th[kAttnCompute];
  fit.attention_fixed_us = th[kAttnFixed];
  fit.kernel_switch_us = th[kSwitch];
  return fit;
}

GpuProfile apply_fit(const GpuProfile& base, const ReplayFit& f) {
  GpuProfile g = base;
  g.gemm_compute_efficiency = f.gemm_compute_efficiency;
  g.gemm_memory_efficiency = f.gemm_memory_efficiency;
  g.attention_memory_efficiency = f.attention_memory_efficiency;
  g.elementwise_memory_efficiency = f.elementwise_memory_efficiency;
  g.kernel_min_us = f.kernel_min_us;
  g.gemm_fixed_us = f.gemm_fixed_us;
  g.attention_compute_efficiency = f.attention_compute_efficiency;
  g.attention_fixed_us = f.attention_fixed_us;
  g.kernel_switch_us = f.kernel_switch_us;
  return g;
}

std::vector<std::pair<const char*, double>> compute_fit_fields(const GpuProfile& g) {
  std::vector<std::pair<const char*, double>> out;
  for (const auto& [key, field] : kFields) out.emplace_back(key, g.*field);
  return out;
}

double predict_point_us(const ReplayPoint& p, const Hardware& hw) {
  const RunSpec run;
  return predict_replayed_phase(plan_of(p.phase), hw, run, ran_block_fp8(p.phase)).us;
}

}  // namespace specsim
