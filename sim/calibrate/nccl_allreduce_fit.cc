#include "calibrate/nccl_allreduce_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cost/bus_bandwidth.h"
#include "cost/nccl_curve_cost.h"
#include "cost/nccl_model.h"
#include "util/error.h"

namespace specsim {

namespace {

// Base NCCL line (latency, bus bandwidth) at `bytes`: the base profile's measured curve at this
// world, else the tuning model's pick.
std::pair<double, double> nccl_base_line(double bytes, int world, const Hardware& base) {
  if (base.topo.nccl_fit)
    if (const NcclFitPiece* p = nccl_fit_piece(*base.topo.nccl_fit, bytes, world)) return {p->lat_us, p->busbw_gbps};
  Hardware h = base;
  h.topo.nccl_fit.reset();
  const NcclEstimate e = nccl_allreduce(bytes, world, h, NcclSettings{});
  return {e.latency_us, e.busbw_gbps};
}

// The base curve outside the measured range, as pieces: the base profile's own measured pieces
// at this world, else one piece per (algorithm, protocol) the tuning model picks above the range
// (each is exactly a line), sampled at 2^(1/8) steps up to 16 GiB.
constexpr double kSampleStep = 1.0905077326652577;  // 2^(1/8)
constexpr double kSampleMaxBytes = 16.0 * (1ull << 30);
std::vector<NcclFitPiece> nccl_outside(double lo, double hi, int world, const Hardware& base, bool& from_fit) {
  std::vector<NcclFitPiece> out;
  from_fit = base.topo.nccl_fit && base.topo.nccl_fit->world == world;
  if (from_fit) {
    for (auto p : base.topo.nccl_fit->pieces) {
      if (p.min_bytes < lo) out.push_back({p.min_bytes, std::min(p.max_bytes, lo), p.lat_us, p.busbw_gbps});
      if (p.max_bytes > hi) out.push_back({std::max(p.min_bytes, hi), p.max_bytes, p.lat_us, p.busbw_gbps});
    }
    return out;
  }
  Hardware h = base;
  h.topo.nccl_fit.reset();
  int last = -1;
  for (double x = hi * kSampleStep; x <= kSampleMaxBytes; x *= kSampleStep) {
    const double b = std::round(x);  // whole bytes, for a readable profile
    const NcclEstimate e = nccl_allreduce(b, world, h, NcclSettings{});
    const int key = e.algo * 10 + e.proto;
    if (key != last) out.push_back({b, b, e.latency_us, e.busbw_gbps});
    out.back().max_bytes = b;
    last = key;
  }
  return out;
}

}  // namespace

AllReduceFit fit_nccl_allreduce(const std::vector<AllReducePoint>& pts, const Hardware& base,
                                const std::string& source) {
  if (pts.empty()) throw InputError("no NCCL all-reduce points to fit", "--from");
  AllReduceFit f = start_fit(AllReduceChoice::Kind::Nccl, pts);
  const int n = f.world;
  std::vector<double> sizes;
  for (const auto& p : pts) sizes.push_back(p.bytes);
  std::sort(sizes.begin(), sizes.end());
  const double mid = sizes[sizes.size() / 2];
  const auto [lat0, busbw0] = nccl_base_line(mid, n, base);
  const double u0 = busbw0 > 0 ? us_per_byte(allreduce_algbw_gbps(busbw0, n)) : 0.0;
  auto busbw_of = [n](double u) { return allreduce_busbw_gbps(gbps_of_us_per_byte(u), n); };

  // x = (graph fixed cost, latency per call, us per byte per call); graph = g + calls (lat + u bytes).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<BoundedParam> ps = {bounded_param("graph fixed cost", base.gpu.graph_launch_us, 0, inf),
                                  bounded_param("lat_us", lat0, 0, inf), bounded_param("busbw_gbps", u0, 1e-12, inf)};
  ps[2].shown = busbw_of;
  ps[2].fallback = u0, ps[2].on_bound = "the sizes gave no positive bandwidth term: kept from the base model";
  // Rows weighted by 1/measured: every graph's relative error counts alike, whether it holds 3
  // all-reduces (a draft forward) or 65 (a target forward).
  Eigen::MatrixXd A(Eigen::Index(pts.size()), 3);
  Eigen::VectorXd b(Eigen::Index(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto& p = pts[i];
    const Eigen::Index r = Eigen::Index(i);
    A(r, 0) = 1 / p.measured_us, A(r, 1) = p.calls / p.measured_us, A(r, 2) = p.calls * p.bytes / p.measured_us;
    b(r) = 1.0;
  }
  hold_unconstrained(ps, pts, 0, {2});
  hold_until_full_rank(A, ps, {2, 0});
  solve_bounded(A, b, ps);
  f.iterations = 1;
  f.notes = held_notes(ps);
  f.graph_us = ps[0].value;
  const double lat = ps[1].value, u = ps[2].value;
  const double busbw = u > 0 ? busbw_of(u) : 0.0;

  NcclFit fit;
  fit.world = n;
  fit.source = source;
  bool from_fit = false;
  auto outside = nccl_outside(f.min_bytes, f.max_bytes, n, base, from_fit);
  for (const auto& q : outside)
    if (q.max_bytes <= f.min_bytes) fit.pieces.push_back(q);
  fit.pieces.push_back({f.min_bytes, f.max_bytes, lat, busbw});
  for (const auto& q : outside)
    if (q.min_bytes >= f.max_bytes) fit.pieces.push_back(q);
  f.notes.push_back(fmt::format(
      "measured range {:.0f}..{:.0f} B; outside it the {} is kept ({} piece(s))", f.min_bytes, f.max_bytes,
      from_fit ? "base profile's measured curve" : "NCCL tuning model of the base profile", fit.pieces.size() - 1));
  if (base.topo.nccl_fit && base.topo.nccl_fit->world != n)
    f.notes.push_back(fmt::format("replaces the base profile's nccl_fit at world {} (a profile holds one)",
                                  base.topo.nccl_fit->world));
  f.topo = base.topo;
  f.topo.nccl_fit = fit;
  f.values = {{"nccl_fit lat_us", lat0, lat, false}, {"nccl_fit busbw_gbps", busbw0, busbw, !ps[2].free}};
  set_worst_errors(f, base, with_topology(base, f.topo));
  return f;
}

}  // namespace specsim
