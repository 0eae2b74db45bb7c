#include "calibrate/allreduce_fit_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "cost/custom_ar_model.h"
#include "engine/op_cost.h"

namespace specsim {

std::string variant_that_ran(const AllReducePoint& p) {
  const auto c = p.ran.find(", ");
  if (c != std::string::npos) {
    const std::string v = p.ran.substr(c + 2);
    if (const auto pv = car_policy::parse_variant(v); pv && *pv != CustomVariant::Auto) return v;
  }
  return p.backend.variant;
}

double predict_allreduce_us(const AllReducePoint& p, const Hardware& hw) {
  const RunSpec run;
  AllReduceChoice backend = p.backend;
  if (backend.kind == AllReduceChoice::Kind::Custom) backend.variant = variant_that_ran(p);  // what was measured
  const CostContext ctx{&hw, &run, backend, Anchors{}, p.world};
  return p.calls * allreduce_us(p.bytes, ctx, /*graph=*/true);
}

double allreduce_error_pct(const AllReducePoint& p, const Hardware& hw, double graph_us) {
  const double m = p.measured_us - graph_us;
  return m > 0 ? 100.0 * (predict_allreduce_us(p, hw) - m) / m : std::numeric_limits<double>::infinity();
}

AllReduceFit start_fit(AllReduceChoice::Kind kind, const std::vector<AllReducePoint>& pts) {
  AllReduceFit f;
  f.kind = kind;
  f.points = pts;
  f.graphs = int(pts.size());
  f.calls = 0;
  f.min_bytes = std::numeric_limits<double>::infinity(), f.max_bytes = 0;
  for (const auto& p : pts) {
    f.calls += p.calls;
    f.min_bytes = std::min(f.min_bytes, p.bytes), f.max_bytes = std::max(f.max_bytes, p.bytes);
  }
  f.world = pts.front().world;
  return f;
}

void set_worst_errors(AllReduceFit& f, const Hardware& before, const Hardware& after) {
  f.worst_before_pct = f.worst_after_pct = 0;
  for (const auto& p : f.points) {
    f.worst_before_pct = std::max(f.worst_before_pct, std::abs(allreduce_error_pct(p, before, f.graph_us)));
    f.worst_after_pct = std::max(f.worst_after_pct, std::abs(allreduce_error_pct(p, after, f.graph_us)));
  }
}

Hardware with_topology(Hardware hw, const TopologyProfile& t) {
  hw.topo = t;
  return hw;
}

void hold_unconstrained(std::vector<BoundedParam>& ps, const std::vector<AllReducePoint>& pts, int graph,
                        const std::vector<int>& bw) {
  std::set<int> calls;
  std::set<double> sizes;
  for (const auto& p : pts) calls.insert(p.calls), sizes.insert(p.bytes);
  if (calls.size() < 2) hold(ps[std::size_t(graph)], "every graph held the same number of all-reduces");
  if (sizes.size() < 2)
    for (int i : bw)
      if (ps[std::size_t(i)].free)
        hold(ps[std::size_t(i)],
             fmt::format("only one message size ({:.0f} B) was measured: kept from the base model", pts.front().bytes));
}

}  // namespace specsim
