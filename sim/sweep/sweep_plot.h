#pragma once
// Sweep plots (report/gnuplot.h draws them):
//  - tokps: tok/s against the all-reduce latency (fixed:US swept; fixed:A..B:STEP@PHASES moves only
//    those phases' all-reduces, the others and the baseline stay on NCCL), baseline and
//    speculation, the break-even latency marked;
//  - heatmap: speedup over accept len x that latency, with the break-even line;
//  - breakdown: the cycle's time by op class, one stacked bar per point.
#include <string>

#include "report/gnuplot.h"
#include "sweep/sweep.h"

namespace specsim::sweep {

enum class PlotKind { Auto, TokPs, Heatmap, Breakdown };

/// Parses tokps | heatmap | breakdown | auto; InputError naming --plot-kind.
PlotKind parse_plot_kind(const std::string& s);

/// Most bars a breakdown plot draws.
constexpr size_t kMaxBreakdownBars = 60;

/// The kind to draw for this grid (Auto picks by what was swept); InputError naming --plot-kind
/// when the grid cannot give that plot, or --allreduce when its fixed: values replace NCCL in
/// different phases (the x axis is one latency). `backends` are the all-reduce axis' values.
PlotKind choose_plot_kind(PlotKind requested, const Grid& grid, const std::vector<AllReduceChoice>& backends);

/// Draws the plot into `path` (written whole or not at all); InputError naming --plot on failure.
/// A non-empty `script_path` also keeps the gnuplot script (data inline) there, to restyle by hand.
void draw_plot(const SweepResult& r, const Grid& grid, PlotKind kind, const std::string& path,
               const std::string& script_path = "");

}  // namespace specsim::sweep
