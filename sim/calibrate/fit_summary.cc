#include "calibrate/fit_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace specsim {

void print_compute_fit(const ReplayFit& fit, const Hardware& base, const Hardware& cal,
                       const std::vector<ReplayPoint>& fitted, const std::vector<ReplayPoint>& held,
                       std::ostream& out) {
  out << fmt::format("fitted {} graph phases and {} op timings in {} iteration(s):\n", fit.phases, fit.ops,
                     fit.iterations);
  const auto before = compute_fit_fields(base.gpu), after = compute_fit_fields(cal.gpu);
  for (std::size_t i = 0; i < before.size(); ++i)
    out << fmt::format("  {:<30} {:>8.3f} -> {:>8.3f}\n", before[i].first, before[i].second, after[i].second);
  for (const auto& c : fit.clamped) out << "  note: " << c << "\n";
  auto table = [&](const char* title, const std::vector<ReplayPoint>& pts) {
    if (pts.empty()) return;
    out << fmt::format("\n{}\n  {:<44} {:>10} {:>10} {:>7} {:>10} {:>7}\n", title, "point", "meas us", "shipped",
                       "err %", "calib", "err %");
    double worst_b = 0, worst_c = 0;
    for (const auto& p : pts) {
      const double b = predict_point_us(p, base), c = predict_point_us(p, cal), m = p.phase.us;
      const double eb = 100 * (b - m) / m, ec = 100 * (c - m) / m;
      worst_b = std::max(worst_b, std::abs(eb)), worst_c = std::max(worst_c, std::abs(ec));
      out << fmt::format("  {:<44} {:>10.1f} {:>10.1f} {:>+7.1f} {:>10.1f} {:>+7.1f}\n", p.label, m, b, eb, c, ec);
    }
    out << fmt::format("  worst |error|: shipped {:.2f}%, calibrated {:.2f}%\n", worst_b, worst_c);
    // The fit weighs every op timing and the terms are bounded, so the phases can come out worse
    // than the base profile's (seen on the fp8 DeepSeek-V3 and eager reports): said, so the
    // profile is not taken blind.
    if (&pts == &fitted && worst_c > worst_b + 0.5)
      out << fmt::format(
          "  warning: the calibrated profile predicts the phases it was fitted to worse than the base profile "
          "({:.2f}% against {:.2f}% at worst): keep the base profile for these reports\n",
          worst_c, worst_b);
  };
  table("fitted points:", fitted);
  table("held-out points:", held);
}

void print_allreduce_calibration(const AllReduceCalibration& c, std::ostream& out) {
  for (const auto& n : c.notes) out << "note: " << n << "\n";
  for (const auto& f : c.fits) {
    const Hardware& after = c.calibrated;
    const std::string name = f.kind == AllReduceChoice::Kind::Nccl ? "nccl" : f.points.front().backend.label();
    out << fmt::format(
        "\nall-reduce fit ({}, world {}): {} all-reduce-only graphs, {} calls, {:.0f}..{:.0f} B, {} "
        "iteration(s):\n",
        name, f.world, f.graphs, f.calls, f.min_bytes, f.max_bytes, f.iterations);
    out << fmt::format("  {:<30} {:>8.3f} -> {:>8.3f}  (fitted; not written: graph_launch_us is the GPU's)\n",
                       "graph fixed cost us", c.base.gpu.graph_launch_us, f.graph_us);
    for (const auto& v : f.values)
      out << fmt::format("  {:<30} {:>8.3f} -> {:>8.3f}{}\n", v.name, v.before, v.after, v.held ? "  (held)" : "");
    for (const auto& n : f.notes) out << "  note: " << n << "\n";
    auto table = [&](const char* title, const std::vector<AllReducePoint>& pts) {
      if (pts.empty()) return;
      out << fmt::format("\n{} (the phase's all-reduces alone in one graph, less {:.2f} us of graph cost)\n", title,
                         f.graph_us);
      out << fmt::format("  {:<52} {:>5} {:>8} {:>9} {:>9} {:>7} {:>9} {:>7}\n", "point", "calls", "bytes", "meas us",
                         "shipped", "err %", "calib", "err %");
      double wb = 0, wc = 0;
      for (const auto& p : pts) {
        const double m = p.measured_us - f.graph_us, b = predict_allreduce_us(p, c.base),
                     k = predict_allreduce_us(p, after);
        const double eb = allreduce_error_pct(p, c.base, f.graph_us), ec = allreduce_error_pct(p, after, f.graph_us);
        wb = std::max(wb, std::abs(eb)), wc = std::max(wc, std::abs(ec));
        out << fmt::format("  {:<52} {:>5} {:>8.0f} {:>9.1f} {:>9.1f} {:>+7.1f} {:>9.1f} {:>+7.1f}\n", p.label, p.calls,
                           p.bytes, m, b, eb, k, ec);
      }
      out << fmt::format("  worst |error|: shipped {:.1f}%, calibrated {:.1f}%\n", wb, wc);
    };
    table("fitted all-reduce points:", f.points);
    std::vector<AllReducePoint> held;
    for (const auto& p : c.held)
      if (p.backend.kind == f.kind && (f.kind != AllReduceChoice::Kind::Nccl || p.world == f.world)) held.push_back(p);
    table("held-out all-reduce points:", held);
  }
}

}  // namespace specsim
