#include "sweep/sweep_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sweep/sweep_bands.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::sweep {

namespace fs = std::filesystem;

PlotKind parse_plot_kind(const std::string& s) {
  if (s == "auto") return PlotKind::Auto;
  if (s == "tokps") return PlotKind::TokPs;
  if (s == "heatmap") return PlotKind::Heatmap;
  if (s == "breakdown") return PlotKind::Breakdown;
  throw InputError("unknown plot kind '" + s + "': use tokps, heatmap, breakdown or auto", "--plot-kind");
}

namespace {

size_t fixed_count(const std::vector<AllReduceChoice>& backends) {
  return std::count_if(backends.begin(), backends.end(),
                       [](const AllReduceChoice& b) { return b.kind == AllReduceChoice::Kind::Fixed; });
}

// The first fixed: backend (the latency axis), or null.
const AllReduceChoice* first_fixed(const std::vector<AllReduceChoice>& backends) {
  for (const auto& b : backends)
    if (b.kind == AllReduceChoice::Kind::Fixed) return &b;
  return nullptr;
}

// The latency axis is one all-reduce: every fixed: value must replace NCCL in the same phases.
void require_one_scope(const std::vector<AllReduceChoice>& backends) {
  const AllReduceChoice* first = first_fixed(backends);
  for (const auto& b : backends)
    if (b.kind == AllReduceChoice::Kind::Fixed && b.phases != first->phases)
      throw InputError(fmt::format("the plot's x axis is one all-reduce latency, but the fixed: values replace NCCL in "
                                   "different phases ({} and {}): plot one scope at a time",
                                   first->label(), b.label()),
                       "--allreduce");
}

// The x axis: which all-reduces the fixed latency replaces, and what stays on NCCL.
std::string latency_label(const AllReduceChoice& fixed) {
  if (!fixed.scoped || fixed.phases == std::array<bool, kNumPhaseKinds>{true, true, true, true})
    return "all-reduce latency (us; every all-reduce, the baseline's too)";
  std::string in, rest;
  for (int i = 0; i < kNumPhaseKinds; ++i) {
    const auto p = static_cast<PhaseKind>(i);
    const std::string name = p == PhaseKind::BaselineDecode ? "baseline" : std::string(phase_name(p));
    std::string& to = fixed.applies_to(p) ? in : rest;
    to += (to.empty() ? "" : ", ") + name;
  }
  return fmt::format("{} all-reduce latency (us; {} on NCCL as modelled)", in, rest);
}

bool accept_swept(const Grid& g) { return g.accept_len.size() > 1 || g.accept_rate.size() > 1; }

const char* axis_short(int axis) {
  switch (axis) {
    case kTp: return "tp";
    case kDp: return "dp";
    case kEp: return "ep";
    case kDpAttn: return "dp-attn";
    case kDtype: return "dtype";
    case kBatch: return "bs";
    case kContext: return "ctx";
    case kGraphBs: return "graph-bs";
    case kTopk: return "topk";
    case kSteps: return "steps";
    case kDraftTokens: return "N";
    case kAllReduce: return "AR";
    case kAcceptLen: return "accept len";
    case kAcceptRate: return "accept rate";
  }
  return "?";
}

std::string axis_value(const Grid& g, const std::vector<AllReduceChoice>& backends, int axis, size_t i) {
  switch (axis) {
    case kTp: return std::to_string(g.tp[i]);
    case kDp: return std::to_string(g.dp[i]);
    case kEp: return std::to_string(g.ep[i]);
    case kDpAttn: return g.dp_attention[i] ? "on" : "off";
    case kDtype: return g.dtype[i];
    case kBatch: return std::to_string(g.batch[i]);
    case kContext: return std::to_string(g.context[i]);
    case kGraphBs: return std::to_string(g.graph_bs[i]);
    case kTopk: return std::to_string(g.topk[i]);
    case kSteps: return std::to_string(g.steps[i]);
    case kDraftTokens: return std::to_string(g.draft_tokens[i]);
    case kAllReduce: return backends[i].label();
    case kAcceptLen: return fmt::format("{:g}", g.accept_len[i]);
    case kAcceptRate: return fmt::format("{:g}", g.accept_rate[i]);
  }
  return "?";
}

// Up to `most` indices spread evenly over [0, n), first and last included.
std::vector<size_t> spread(size_t n, size_t most) {
  std::vector<size_t> out;
  if (n <= most) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (size_t k = 0; k < most; ++k) out.push_back(k * (n - 1) / (most - 1));
  return out;
}

// The plotting context: the grid with its all-reduce axis filled in, and point lookup by axis indices.
struct View {
  const SweepResult& r;
  Grid g;
  View(const SweepResult& res, const Grid& grid) : r(res), g(grid) { g.allreduce = res.backends; }
  size_t index(const std::array<size_t, kNumAxes>& ix) const {
    size_t i = 0;
    for (int a = 0; a < kNumAxes; ++a) i = i * g.axis_size(a) + ix[a];
    return i;
  }
  const PointResult* at(const std::array<size_t, kNumAxes>& ix) const {
    const PointResult& p = r.points[index(ix)];
    return p.ok ? &p : nullptr;
  }
  std::string title() const {
    const Scenario& s = r.base;
    return fmt::format("{} on {}x {} ({}), TP {}", s.target.name, s.hw.num_gpus, s.hw.gpu.name, s.hw.topo.name,
                       s.run.tp_size);
  }
};

// Fixed all-reduce backends sorted by latency: (latency us, backend index).
std::vector<std::pair<double, size_t>> fixed_axis(const View& v) {
  std::vector<std::pair<double, size_t>> xs;
  for (size_t b = 0; b < v.r.backends.size(); ++b)
    if (v.r.backends[b].kind == AllReduceChoice::Kind::Fixed) xs.emplace_back(v.r.backends[b].fixed_us, b);
  std::sort(xs.begin(), xs.end());
  std::vector<std::pair<double, size_t>> thin;
  for (const size_t k : spread(xs.size(), 2000)) thin.push_back(xs[k]);
  return thin;
}

struct Script {
  std::string text, data;
};

Script tokps(const View& v) {
  const auto xs = fixed_axis(v);
  // Series: the accept axis if swept, else the first swept plan-shaping axis.
  int series = -1;
  if (v.g.swept(kAcceptLen))
    series = kAcceptLen;
  else if (v.g.swept(kAcceptRate))
    series = kAcceptRate;
  else
    for (int a = 0; a < kFirstEvalAxis && series < 0; ++a)
      if (v.g.swept(a)) series = a;
  const std::vector<size_t> values = series < 0 ? std::vector<size_t>{0} : spread(v.g.axis_size(series), 6);
  const bool baseline_per_series = series >= 0 && series < kFirstEvalAxis;
  Script s;
  std::string plots, marks;
  int block = 0;
  // The likely range of speculation's tok/s (held-out errors of the run's class) as a shaded band.
  // A series' points share its batch size and top-k, so one band (by how they are anchored) covers it.
  const BandFactors bands = band_factors(v.r.base);
  std::string titled_class;
  for (size_t k = 0; k < values.size(); ++k) {
    std::array<size_t, kNumAxes> ix{};
    if (series >= 0) ix[series] = values[k];
    std::vector<std::array<double, 3>> pts;  // us, baseline tok/s, spec tok/s
    int batch = 0, topk = 1;
    for (const auto& [us, b] : xs) {
      ix[kAllReduce] = b;
      if (const PointResult* p = v.at(ix))
        pts.push_back({us, p->baseline_tok_s, p->spec_tok_s}), batch = p->batch, topk = p->topk;
    }
    if (pts.empty()) continue;
    const std::optional<ErrorBand>& band = bands.at(batch, topk).spec;
    for (const auto& p : pts)
      s.data += fmt::format("{} {} {} {} {}\n", p[0], p[1], p[2], band ? p[2] * band->lo : p[2],
                            band ? p[2] * band->hi : p[2]);
    s.data += "\n\n";
    const std::string name =
        series < 0 ? "" : fmt::format(" ({} {})", axis_short(series), axis_value(v.g, v.r.backends, series, values[k]));
    // Break-even: where speculation's tok/s crosses the baseline's (linear between points).
    std::string be =
        pts.front()[2] > pts.front()[1] ? ", faster at every latency shown" : ", slower at every latency shown";
    for (size_t i = 1; i < pts.size(); ++i) {
      const double d0 = pts[i - 1][2] - pts[i - 1][1], d1 = pts[i][2] - pts[i][1];
      if ((d0 >= 0) == (d1 >= 0)) continue;
      const double f = d0 / (d0 - d1);
      const double x = pts[i - 1][0] + f * (pts[i][0] - pts[i - 1][0]);
      const double y = pts[i - 1][1] + f * (pts[i][1] - pts[i - 1][1]);
      be = fmt::format(", break-even at {:.0f} us", x);
      marks += fmt::format("set label {} at {},{} point pt 7 ps 1.6 lc rgb 'black' offset 1,1\n",
                           gnuplot_quote(fmt::format("break-even {:.0f} us", x)), x, y);
      break;
    }
    if (k == 0 || baseline_per_series)
      plots += fmt::format("'$DATA' index {} using 1:2 with lines lw 2 dt 2 lc {} title {}, ", block, k + 1,
                           gnuplot_quote("baseline" + (baseline_per_series ? name : "")));
    if (band) {
      // The legend names a band's basis once, and again where a series takes another class.
      const bool titled = band->cls != titled_class;
      titled_class = band->cls;
      plots += fmt::format(
          "'$DATA' index {} using 1:4:5 with filledcurves fs transparent solid 0.15 noborder lc {} {}, ", block, k + 1,
          titled ? "title " + gnuplot_quote(fmt::format("likely range ({})", band_basis(*band)))
                 : std::string("notitle"));
    }
    plots += fmt::format("'$DATA' index {} using 1:3 with lines lw 2 lc {} title {}, ", block, k + 1,
                         gnuplot_quote("speculation" + name + be));
    ++block;
  }
  if (block == 0) throw InputError("nothing to plot: every point of the plotted slice was skipped", "--plot");
  // The measured operating point (a measured all-reduce latency with its measured speculative
  // tok/s), as a point of its own so the axes include it.
  for (const MeasuredRun& m : v.r.base.measured) {
    if (!m.run.measured_allreduce_us || !m.run.measured_spec_tok_s) continue;
    s.data += fmt::format("{} {}\n\n\n", *m.run.measured_allreduce_us, *m.run.measured_spec_tok_s);
    plots += fmt::format("'$DATA' index {} using 1:2 with points pt 9 ps 2 lc rgb 'black' title {}, ", block++,
                         gnuplot_quote(fmt::format("measured ({}): {:g} tok/s with NCCL at {:g} us", m.origin,
                                                   *m.run.measured_spec_tok_s, *m.run.measured_allreduce_us)));
  }
  plots.resize(plots.size() - 2);
  s.text = fmt::format(
      "set title {}\nset xlabel {}\nset ylabel 'tokens/s'\n"
      "set key outside bottom center horizontal maxrows 3\nset grid\nset yrange [0:*]\n{}plot {}\n",
      gnuplot_quote(v.title() + ": tok/s against all-reduce latency"),
      gnuplot_quote(latency_label(v.r.backends[xs.front().second])), marks, plots);
  return s;
}

Script heatmap(const View& v) {
  const auto xs = fixed_axis(v);
  const int yaxis = v.g.swept(kAcceptLen) ? kAcceptLen : kAcceptRate;
  const std::vector<size_t> ys = spread(v.g.axis_size(yaxis), 200);
  std::vector<size_t> xk = spread(xs.size(), 200);
  Script s;
  double zmin = 1, zmax = 1, ymin = INFINITY, ymax = -INFINITY;
  std::string be;
  std::array<size_t, kNumAxes> ix{};
  for (const size_t yi : ys) {
    ix[yaxis] = yi;
    bool any = false;
    for (const size_t k : xk) {
      ix[kAllReduce] = xs[k].second;
      const PointResult* p = v.at(ix);
      if (!p) continue;
      any = true;
      s.data += fmt::format("{} {} {}\n", xs[k].first, p->accept_len, p->speedup);
      zmin = std::min(zmin, p->speedup), zmax = std::max(zmax, p->speedup);
      ymin = std::min(ymin, p->accept_len), ymax = std::max(ymax, p->accept_len);
      if (yi == ys.front()) be += fmt::format("{} {}\n", xs[k].first, p->breakeven_accept_len);
    }
    if (any) s.data += "\n";
  }
  if (s.data.empty()) throw InputError("nothing to plot: every point of the plotted slice was skipped", "--plot");
  s.text = fmt::format(
      "$BE << EOD\n{}EOD\n"
      "set title {}\nset xlabel {}\nset ylabel 'accept len'\nset cblabel 'speedup (spec / "
      "baseline tok/s)'\n"
      "set view map\nset pm3d map corners2color c1\nset key at screen 0.5,0.06 center horizontal\n"
      "set cbrange [{}:{}]\nset palette defined ({} '#b2182b', 1 'white', {} '#1a9850')\n"
      "set xrange [{}:{}]\nset yrange [{}:{}]\n"
      "splot '$DATA' using 1:2:3 with pm3d notitle, '$BE' using 1:2:(1) with lines lw 2 lc rgb 'black' "
      "title 'break-even accept len (speedup 1)'\n",
      be, gnuplot_quote(v.title() + ": speedup of speculation"),
      gnuplot_quote(latency_label(v.r.backends[xs.front().second])), zmin, zmax, zmin, zmax, xs.front().first,
      xs.back().first, ymin,
      ymax > ymin ? ymax : ymin + 1);  // the accept lens swept (the break-even line may run past them)
  return s;
}

// Per output token, not per cycle: a cycle of more draft steps (or a larger batch) costs more but
// emits more tokens, and the bar should show what a token costs. tok/s (right axis) beside it.
Script breakdown(const View& v) {
  Script s;
  const bool spec = v.r.base.run.speculative();
  size_t bars = 0;
  std::array<bool, kNumParts> drawn{};  // parts with time somewhere: only those get a legend entry
  for (size_t i = 0; i < v.r.points.size(); ++i) {
    const PointResult& p = v.r.points[i];
    if (!p.ok) continue;
    const auto ix = v.g.decode(i);
    std::string label;
    for (int a = 0; a < kNumAxes; ++a)
      if (v.g.swept(a))
        label +=
            (label.empty() ? "" : " ") + std::string(axis_short(a)) + " " + axis_value(v.g, v.r.backends, a, ix[a]);
    if (label.empty()) label = v.r.backends[p.backend].label();
    plot_safe(label, "a bar label", "--plot");
    if (label.find('"') != std::string::npos) throw InputError("a bar label holds a double quote", "--plot");
    // Tokens the whole batch emits per cycle: the bar is then 1e6 / tok/s, split by op class.
    const double tokens = (spec && p.accept_len > 0 ? p.accept_len : 1.0) * std::max(1, p.batch);
    s.data += "\"" + label + "\"";
    for (int k = 0; k < kNumParts; ++k) {
      s.data += fmt::format(" {}", p.cycle_parts_us[static_cast<size_t>(k)] / tokens);
      drawn[static_cast<size_t>(k)] = drawn[static_cast<size_t>(k)] || p.cycle_parts_us[static_cast<size_t>(k)] > 0;
    }
    s.data += fmt::format(" {}\n", spec ? p.spec_tok_s : p.baseline_tok_s);
    ++bars;
  }
  if (bars == 0) throw InputError("nothing to plot: every point was skipped", "--plot");
  std::string plots;
  bool first = true;
  for (int k = 0; k < kNumParts; ++k) {
    if (!drawn[static_cast<size_t>(k)]) continue;
    plots += fmt::format("{} using {}{} title {}, ", first ? "'$DATA'" : "''", k + 2, first ? ":xtic(1)" : "",
                         gnuplot_quote(part_name(k)));
    first = false;
  }
  if (first)  // every part zero: still one (empty) bar series for the labels
    plots += "'$DATA' using 2:xtic(1) notitle, ";
  plots += fmt::format(
      "'$DATA' using 0:{} axes x1y2 with linespoints lw 2 pt 7 lc rgb 'black' title 'tok/s (right "
      "axis)'",
      kNumParts + 2);
  s.text = fmt::format(
      "set title {}\nset ylabel {}\nset y2label 'tokens/s'\nset ytics nomirror\nset y2tics\nset y2range [0:*]\n"
      "set style data histograms\nset style histogram rowstacked\n"
      "set style fill solid 0.85 border -1\nset boxwidth 0.7\nset key outside right top\nset grid ytics\n"
      "set xtics rotate by -40 left\nset yrange [0:*]\nplot {}\n",
      gnuplot_quote(v.title() + ": where an output token's time goes"),
      gnuplot_quote(spec ? "us per output token (cycle / (accept len x batch))" : "us per output token (step / batch)"),
      plots);
  return s;
}

}  // namespace

PlotKind choose_plot_kind(PlotKind requested, const Grid& grid, const std::vector<AllReduceChoice>& backends) {
  const size_t fixed = fixed_count(backends);
  PlotKind k = requested;
  if (k == PlotKind::Auto)
    k = fixed >= 2 ? (accept_swept(grid) ? PlotKind::Heatmap : PlotKind::TokPs) : PlotKind::Breakdown;
  if ((k == PlotKind::TokPs || k == PlotKind::Heatmap) && fixed < 2)
    throw InputError(
        "this plot needs the all-reduce latency swept: --allreduce fixed:A..B[:STEP] with two or more values",
        "--plot-kind");
  if (k == PlotKind::TokPs || k == PlotKind::Heatmap) require_one_scope(backends);
  if (k == PlotKind::Heatmap && !accept_swept(grid))
    throw InputError("a heat map needs --accept-len (or --accept-rate) swept too", "--plot-kind");
  if (k == PlotKind::Breakdown) {
    Grid g = grid;
    g.allreduce = backends;
    if (g.size() > kMaxBreakdownBars) {
      // Name the swept flags, largest first: sweeping one of them at a time fits.
      std::vector<std::pair<size_t, int>> axes;
      for (int a = 0; a < kNumAxes; ++a)
        if (g.swept(a)) axes.emplace_back(g.axis_size(a), a);
      std::sort(axes.rbegin(), axes.rend());
      std::string dims, fix;
      for (const auto& [n, a] : axes) dims += fmt::format("{}{} {}", dims.empty() ? "" : " x ", axis_flag(a), n);
      if (!axes.empty()) fix = fmt::format("; give {} one value per run (or fewer values)", axis_flag(axes[0].second));
      throw InputError(fmt::format("a breakdown plot draws one bar per point, at most {}; this grid has {} ({}){}",
                                   kMaxBreakdownBars, g.size(), dims, fix),
                       "--plot-kind");
    }
  }
  return k;
}

void draw_plot(const SweepResult& r, const Grid& grid, PlotKind kind, const std::string& path,
               const std::string& script_path) {
  check_plot_target(path);
  plot_safe(script_path, "the plot script path", "--plot-script");
  const View v(r, grid);
  check_plot_names(r.base);
  check_plot_tools();
  Script s = kind == PlotKind::TokPs ? tokps(v) : kind == PlotKind::Heatmap ? heatmap(v) : breakdown(v);
  render_gnuplot(path, script_path, s.data, s.text);
}

}  // namespace specsim::sweep
