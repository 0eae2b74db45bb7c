#pragma once
// Plots drawn by gnuplot (Debian's gnuplot-nox), for every command that draws one (sweep, tune):
// the caller gives the data and the plot commands; this writes a script with the data inline
// into a temp folder, runs gnuplot on it and moves the image into place whole.
#include <string>

#include "scenario/scenario.h"

namespace specsim {

/// A gnuplot single-quoted string ('' stands for a quote inside); the text is checked by
/// plot_safe() first, as a backstop.
std::string gnuplot_quote(const std::string& s);

/// InputError naming `where` when `text` holds a control character (newline included) or a
/// backquote: such a string never reaches a gnuplot script.
void plot_safe(const std::string& text, const std::string& what, const std::string& where);

/// plot_safe() over the names a plot title shows (model, GPU, topology).
void check_plot_names(const Scenario& s);

/// Checks the output name (.png or .svg) and its characters; InputError naming --plot.
void check_plot_target(const std::string& path);

/// Checks that gnuplot and a temp folder are there (EnvironmentError, exit 3); called after
/// every input check, so a bad name is reported as bad input on any machine.
void check_plot_tools();

/// Runs gnuplot on `commands` with `data` as the datablock $DATA, drawing into `path` (.png or
/// .svg, written whole or not at all); `script_path` non-empty also keeps the script there. The
/// commands must quote every user string with plot_safe() checked. InputError naming --plot.
void render_gnuplot(const std::string& path, const std::string& script_path, const std::string& data,
                    const std::string& commands);

}  // namespace specsim
