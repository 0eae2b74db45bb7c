#include "calibrate/custom_allreduce_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "cost/bus_bandwidth.h"
#include "cost/custom_ar_model.h"
#include "util/error.h"

namespace specsim {

namespace {

constexpr int kMaxCustomIterations = 20;  // the custom fit re-picks each point's variant, then re-solves
// The custom model's peer bandwidth applies to every size, so it is only fitted when the bytes
// term is a real share of the largest measured message (decode-sized messages are all latency).
constexpr double kMinBytesShare = 0.25;

// The engine's per-call custom time is affine in (barrier_us, us per byte read, us per byte
// written) for a fixed variant: coefficients by exact differences through the engine itself.
struct CustomRow {
  double c0 = 0;
  double c[3] = {0, 0, 0};
  CustomVariant variant = CustomVariant::OneShotPull;
};
CustomRow custom_row(const AllReducePoint& p, const Hardware& hw) {
  const CustomEstimate e = custom_allreduce(p.bytes, p.world, hw, variant_that_ran(p));
  const std::string v(custom_variant_name(e.variant));
  auto at = [&](const Hardware& h) { return custom_allreduce(p.bytes, p.world, h, v).us; };
  CustomRow r;
  r.variant = e.variant;
  Hardware h = hw;
  h.topo.barrier_us += 1;
  r.c[0] = at(h) - e.us;
  h = hw, h.topo.peer_read_bw_gbps /= 2;  // halving doubles the us per byte: the step is the value itself
  r.c[1] = (at(h) - e.us) / us_per_byte(hw.topo.peer_read_bw_gbps);
  h = hw, h.topo.peer_write_bw_gbps /= 2;
  r.c[2] = (at(h) - e.us) / us_per_byte(hw.topo.peer_write_bw_gbps);
  r.c0 = e.us - r.c[0] * hw.topo.barrier_us - r.c[1] * us_per_byte(hw.topo.peer_read_bw_gbps) -
         r.c[2] * us_per_byte(hw.topo.peer_write_bw_gbps);
  return r;
}

}  // namespace

AllReduceFit fit_custom_allreduce(const std::vector<AllReducePoint>& pts, const Hardware& base_in) {
  if (pts.empty()) throw InputError("no custom all-reduce points to fit", "--from");
  AllReduceFit f = start_fit(AllReduceChoice::Kind::Custom, pts);
  for (const auto& p : pts) {
    if (const auto why = custom_unsupported_reason(base_in, p.world); !why.empty())
      throw InputError("the reports ran the custom all-reduce, but on the base profile " + why, "--hardware");
    if (p.bytes > kCustomMaxBytes)
      throw InputError(fmt::format("{:.0f} B per all-reduce exceed the custom kernel's buffer", p.bytes), p.file);
  }
  // The engine caps peer bandwidth at the link's: fit the effective one, held at or below the link.
  Hardware hw = base_in;
  const double link = hw.link_bw_gbps();
  hw.topo.peer_read_bw_gbps = std::min(hw.topo.peer_read_bw_gbps, link);
  hw.topo.peer_write_bw_gbps = std::min(hw.topo.peer_write_bw_gbps, link);
  const double inf = std::numeric_limits<double>::infinity();
  const std::string at_link = fmt::format("held at the link's {:.0f} GB/s (the engine caps peer traffic there)", link);
  std::vector<BoundedParam> ps;
  std::vector<CustomVariant> last;
  double bytes_share = 0;  // of the largest message's time, under the base profile
  for (f.iterations = 1;; ++f.iterations) {
    // x = (graph fixed cost, barrier_us, us per byte read, us per byte written).
    ps = {bounded_param("graph fixed cost", base_in.gpu.graph_launch_us, 0, inf),
          bounded_param("barrier_us", hw.topo.barrier_us, 0, inf),
          bounded_param("peer_read_bw_gbps", us_per_byte(hw.topo.peer_read_bw_gbps), us_per_byte(link), inf),
          bounded_param("peer_write_bw_gbps", us_per_byte(hw.topo.peer_write_bw_gbps), us_per_byte(link), inf)};
    ps[2].on_bound = ps[3].on_bound = at_link;
    ps[2].shown = ps[3].shown = gbps_of_us_per_byte;
    // Rows weighted by 1/measured, as the NCCL fit's.
    Eigen::MatrixXd A(Eigen::Index(pts.size()), 4);
    Eigen::VectorXd b(Eigen::Index(pts.size()));
    std::vector<CustomVariant> vs;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const auto& p = pts[i];
      const CustomRow row = custom_row(p, hw);
      vs.push_back(row.variant);
      if (p.bytes == f.max_bytes && f.iterations == 1) {
        const double moving = row.c[1] * ps[2].value + row.c[2] * ps[3].value;
        bytes_share = std::max(bytes_share, moving / (row.c0 + row.c[0] * ps[1].value + moving));
      }
      const Eigen::Index r = Eigen::Index(i);
      A(r, 0) = 1 / p.measured_us;
      for (int k = 0; k < 3; ++k) A(r, k + 1) = p.calls * row.c[k] / p.measured_us;
      b(r) = (p.measured_us - p.calls * row.c0) / p.measured_us;
    }
    for (std::size_t k : {2u, 3u})
      if (A.col(Eigen::Index(k)).norm() == 0)
        hold(ps[k], "the variant the engine picks for these points does not use it");
      else if (bytes_share < kMinBytesShare)
        hold(ps[k], fmt::format("the largest message ({:.0f} B) spends {:.0f}% of its time moving bytes, too little to "
                                "fit a bandwidth (the profile's applies to every size; needs {:.0f}%)",
                                f.max_bytes, 100 * bytes_share, 100 * kMinBytesShare));
    hold_unconstrained(ps, pts, 0, {2, 3});
    hold_until_full_rank(A, ps, {3, 2, 0});
    solve_bounded(A, b, ps);
    hw.topo.barrier_us = ps[1].value;
    hw.topo.peer_read_bw_gbps = gbps_of_us_per_byte(ps[2].value);
    hw.topo.peer_write_bw_gbps = gbps_of_us_per_byte(ps[3].value);
    // Stop when the variant each point binds no longer moves (a fixed point), or give up saying so.
    if (vs == last) break;
    if (f.iterations == kMaxCustomIterations) {
      f.notes.push_back("the engine's variant choice kept moving: stopped after " + std::to_string(f.iterations) +
                        " iterations");
      break;
    }
    last = std::move(vs);
  }
  for (auto& n : held_notes(ps)) f.notes.push_back(std::move(n));
  f.graph_us = ps[0].value;
  // Which variant the engine now picks, beside what the replay ran (and the fit describes).
  std::set<std::string> picked, ran;
  for (const auto& p : pts) {
    picked.insert(std::string(custom_variant_name(custom_allreduce(p.bytes, p.world, hw, p.backend.variant).variant)));
    if (const std::string v = variant_that_ran(p); v != "auto") ran.insert(v);
  }
  if (!ran.empty() && ran != picked)
    f.notes.push_back(
        fmt::format("the kernel ran {} but the engine's {} now picks {}: the fitted values describe the "
                    "kernel that ran",
                    fmt::join(ran, ", "), pts.front().backend.label(), fmt::join(picked, ", ")));
  // Written: what the points constrained (a bandwidth held at the link counts); the rest keeps the base value.
  auto moved = [&](const BoundedParam& p) { return p.free || p.why == at_link; };
  f.topo = base_in.topo;
  f.topo.barrier_us = hw.topo.barrier_us;
  if (moved(ps[2])) f.topo.peer_read_bw_gbps = hw.topo.peer_read_bw_gbps;
  if (moved(ps[3])) f.topo.peer_write_bw_gbps = hw.topo.peer_write_bw_gbps;
  f.values = {{"barrier_us", base_in.topo.barrier_us, f.topo.barrier_us, false},
              {"peer_read_bw_gbps", base_in.topo.peer_read_bw_gbps, f.topo.peer_read_bw_gbps, !moved(ps[2])},
              {"peer_write_bw_gbps", base_in.topo.peer_write_bw_gbps, f.topo.peer_write_bw_gbps, !moved(ps[3])}};
  set_worst_errors(f, base_in, with_topology(base_in, f.topo));
  return f;
}

}  // namespace specsim
