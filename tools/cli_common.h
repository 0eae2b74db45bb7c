#pragma once
// What every subcommand shares: the run flags (SGLang's names), and the error boundary
// (error_boundary.h) that turns bad input into `error: ...` and exit 2.
#include <CLI/CLI.hpp>

#include "error_boundary.h"
#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"

namespace specsim::cli {

/// Flag checks CLI11 lacks: a finite number (CLI::Range lets NaN through), and a whole number
/// written without a sign (an unsigned option would wrap -5 around).
extern const CLI::Validator finite_number, whole_number;

/// Adds the scenario flags (model, hardware, SGLang speculation and graph flags, anchors).
void add_run_flags(CLI::App& app, RunArgs& args);

}  // namespace specsim::cli
