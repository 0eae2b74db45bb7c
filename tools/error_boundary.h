#pragma once
// The one error boundary of every binary (specsim and its subcommands, specsim-arbench,
// specsim-attnbench): whatever a run throws becomes one line on stderr and an exit code. Only
// tools/ prints errors and exits; the libraries throw InputError or EnvironmentError.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace specsim::cli {

/// Exit codes: 0 ok, 1 a regression check failed, 2 bad input, 3 the machine lacks something the
/// run needs (a program, a temp folder), 70 an internal error.
constexpr int kExitOk = 0, kExitRegression = 1, kExitBadInput = 2, kExitEnvironment = 3, kExitInternal = 70;

/// `s` on one line: control characters and bytes that are not UTF-8 shown escaped (\n, \xff), a
/// text above 1000 characters cut in its middle (its start and its end, where the flag or file is
/// named, kept).
std::string one_line(const std::string& s);

/// Runs `body` and returns its exit code. An exception becomes one line on stderr:
/// InputError `error: <what> (<where>)` exit 2, EnvironmentError `error: <what> (<fix>)` exit 3,
/// a JSON input of the wrong shape exit 2, out of memory (bad_alloc, length_error) exit 3, anything else
/// `internal error: <what>` exit 70.
int error_boundary(const std::function<int()>& body);

/// Flushes stdout (C stdio and std::cout) and returns `rc`, or, when what was printed could not
/// be written (`specsim --json > /dev/full`), prints `error: cannot write to stdout: ...` and
/// returns kExitEnvironment (when `rc` was 0).
int finish_stdout(int rc);

/// Parses argv into `app`, then runs `body`, both inside error_boundary: --help prints the help
/// (exit 0), a flag CLI11 refuses is `error: <what> (run with --help for the flags)` (exit 2).
int guarded(CLI::App& app, int argc, char** argv, const std::function<int()>& body);

}  // namespace specsim::cli
