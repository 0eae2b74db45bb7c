#pragma once
// What every subcommand shares: the run flags (SGLang's names) and the error boundary that turns
// bad input into `error: ...` and exit 2.
#include <CLI/CLI.hpp>
#include <functional>

#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"

namespace specsim::cli {

/// Exit codes: 0 ok, 1 a regression check failed, 2 bad input, 3 the machine lacks something the
/// run needs (a program, a temp folder), 70 an internal error.
constexpr int kExitOk = 0, kExitRegression = 1, kExitBadInput = 2, kExitEnvironment = 3, kExitInternal = 70;

/// Flag checks CLI11 lacks: a finite number (CLI::Range lets NaN through), and a whole number
/// written without a sign (an unsigned option would wrap -5 around).
extern const CLI::Validator finite_number, whole_number;

/// Adds the scenario flags (model, hardware, SGLang speculation and graph flags, anchors).
void add_run_flags(CLI::App& app, RunArgs& args);

/// Parses argv into `app` and runs `body`, mapping every failure to one `error:` line and an exit code.
int guarded(CLI::App& app, int argc, char** argv, const std::function<int()>& body);

}  // namespace specsim::cli
