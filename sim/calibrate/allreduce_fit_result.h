#pragma once
// What a backend's all-reduce fit found, and what both fits (NCCL, custom) share: the engine's
// price of a point, its error, the points' ranges, and which parameters the points can constrain.
#include <string>
#include <vector>

#include "calibrate/bounded_lsq.h"
#include "calibrate/replay_reports.h"
#include "scenario/hardware.h"

namespace specsim {

/// A fitted quantity, before and after ("held": not constrained by the points; notes say why).
struct FittedValue {
  std::string name;
  double before = 0, after = 0;
  bool held = false;
};

/// What one backend's fit found.
struct AllReduceFit {
  AllReduceChoice::Kind kind = AllReduceChoice::Kind::Nccl;
  int world = 0;        ///< NCCL: the world the curve is for (custom: the first report's)
  double graph_us = 0;  ///< fixed cost of an all-reduce-only graph (fitted, not written)
  std::vector<FittedValue> values;
  std::vector<std::string> notes;
  int graphs = 0, calls = 0, iterations = 0;
  double min_bytes = 0, max_bytes = 0;
  TopologyProfile topo;  ///< the base topology with the fit applied
  std::vector<AllReducePoint> points;
  /// Worst |allreduce_error_pct| over `points` before and after (calibrate_allreduce: shipped -> written).
  double worst_before_pct = 0, worst_after_pct = 0;
};

/// The custom variant a point's replay note says ran ("custom all-reduce, one-shot-pull"), else
/// the one the report asked for: a measured time describes the kernel that ran, whatever `auto`
/// picks today.
std::string variant_that_ran(const AllReducePoint& p);

/// The engine's time of a point's all-reduces on `hw` (a custom point: the variant that ran):
/// calls x one call (graph replay, no anchors).
double predict_allreduce_us(const AllReducePoint& p, const Hardware& hw);

/// 100 * (predicted - measured) / measured, where measured is the point's graph time less the
/// graph's own fixed cost `graph_us` (so it compares with what the engine adds to a phase).
double allreduce_error_pct(const AllReducePoint& p, const Hardware& hw, double graph_us);

/// A fit of `kind` over `pts` (not empty) with its points, counts, size range and world filled in.
AllReduceFit start_fit(AllReduceChoice::Kind kind, const std::vector<AllReducePoint>& pts);

/// Sets the fit's worst errors over its points: on `before`, and on `after`.
void set_worst_errors(AllReduceFit& f, const Hardware& before, const Hardware& after);

/// `hw` with topology `t`.
Hardware with_topology(Hardware hw, const TopologyProfile& t);

/// Holds what the points cannot separate, saying why: the graph's fixed cost (parameter
/// `graph`) when every graph held the same number of all-reduces, the bandwidths `bw` when one
/// message size was measured.
void hold_unconstrained(std::vector<BoundedParam>& ps, const std::vector<AllReducePoint>& pts, int graph,
                        const std::vector<int>& bw);

}  // namespace specsim
