#pragma once
// `specsim sweep` in two calls around the run of the points (the caller may show progress and
// prints the summary between them): the flags checked and the grid built, then the plot and the
// files written from the result.
#include <string>
#include <vector>

#include "scenario/load_scenario.h"
#include "scenario/resolve.h"
#include "sweep/grid.h"
#include "sweep/sweep.h"
#include "sweep/sweep_plot.h"

namespace specsim::sweep {

/// The run flags that take lists and ranges (their single-value options replaced by these).
struct ListFlags {
  std::string tp, dp, ep, dp_attention, dtype, batch, context, graph_bs, topk, steps, draft_tokens, accept_len,
      accept_rate;
  std::vector<std::string> allreduce;
};

/// `specsim sweep`'s outputs.
struct SweepOutputs {
  std::string csv_path;  ///< -o: CSV file ("-" or empty without --json/--plot: stdout)
  std::string json_path, plot_path, plot_script;
  std::string plot_kind = "auto";
};

/// A sweep ready to run: its grid and plot kind, every output and flag checked.
struct SweepPlan {
  Grid grid;
  PlotKind kind = PlotKind::Auto;
  /// The run flags every point starts from: the command's, with each axis given one value set as
  /// `specsim run` would take it, so measurements on the command line anchor at those settings.
  RunArgs base;
  ScenarioFile file;  ///< --scenario, read (empty path: none)
};

/// Checks the outputs and the memory the grid needs, builds the grid from the list flags and
/// picks the plot kind. InputError (or EnvironmentError: no gnuplot) before any point runs, also
/// for a command-line measurement beside an axis it depends on swept over several values (which
/// setting was measured?).
SweepPlan plan_sweep(const RunArgs& args, const ListFlags& lists, const SweepOutputs& out,
                     const std::string& scenario_path = "");

/// Draws the plot and writes the CSV and JSON files of a finished sweep; returns the CSV for
/// stdout (empty when it went to a file). InputError when no point could be evaluated.
std::string write_sweep_outputs(const SweepResult& r, const SweepPlan& p, const SweepOutputs& out, int threads);

}  // namespace specsim::sweep
