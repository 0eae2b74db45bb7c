#pragma once
// Sweep plots drawn by gnuplot (Debian's gnuplot-nox): the tool writes a data file and a script
// into a temp folder and runs gnuplot on them.
//  - tokps: tok/s against the all-reduce latency (fixed:US swept), baseline and speculation, the
//    break-even latency marked;
//  - heatmap: speedup over accept len x all-reduce latency, with the break-even line;
//  - breakdown: the cycle's time by op class, one stacked bar per point.
#include <string>

#include "sweep/sweep.h"

namespace specsim::sweep {

enum class PlotKind { Auto, TokPs, Heatmap, Breakdown };

/// Parses tokps | heatmap | breakdown | auto; InputError naming --plot-kind.
PlotKind parse_plot_kind(const std::string& s);

/// Most bars a breakdown plot draws.
constexpr size_t kMaxBreakdownBars = 60;

/// The kind to draw for this grid (Auto picks by what was swept); InputError naming --plot-kind
/// when the grid cannot give that plot. `backends` are the all-reduce axis' values.
PlotKind choose_plot_kind(PlotKind requested, const Grid& grid, const std::vector<AllReduceChoice>& backends);

/// Checks the output name (.png or .svg) and its characters; InputError naming --plot.
void check_plot_target(const std::string& path);

/// Checks that gnuplot and a temp folder are there (EnvironmentError, exit 3); called after
/// every input check, so a bad name is reported as bad input on any machine.
void check_plot_tools();

/// InputError naming `where` when `text` holds a control character (newline included) or a
/// backquote: such a string never reaches a gnuplot script.
/// plot_safe() over the names a plot title shows (model, GPU, topology).
void check_plot_names(const Scenario& s);

void plot_safe(const std::string& text, const std::string& what, const std::string& where);

/// Draws the plot into `path` (written whole or not at all); InputError naming --plot on failure.
/// A non-empty `script_path` also keeps the gnuplot script (data inline) there, to restyle by hand.
void draw_plot(const SweepResult& r, const Grid& grid, PlotKind kind, const std::string& path,
               const std::string& script_path = "");

/// Runs gnuplot on `commands` with `data` as the datablock $DATA, drawing into `path` (.png or
/// .svg, written whole or not at all); `script_path` non-empty also keeps the script there. The
/// commands must quote every user string with plot_safe() checked. InputError naming --plot.
void render_gnuplot(const std::string& path, const std::string& script_path, const std::string& data,
                    const std::string& commands);

}  // namespace specsim::sweep
