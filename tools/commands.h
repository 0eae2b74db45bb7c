#pragma once
// The subcommands of `specsim`, one function each (argv without the subcommand name's slot), and
// the table main() picks them from (tests read it too: every command is listed and helps).
#include <span>

namespace specsim::cli {

int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_replay(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_check(int argc, char** argv);
int cmd_calibrate(int argc, char** argv);
int cmd_ingest(int argc, char** argv);
int cmd_validate(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_diagnose(int argc, char** argv);

/// One subcommand: its name, its line in `specsim help`, and its function.
struct Command {
  const char* name;
  const char* help;
  int (*run)(int argc, char** argv);
};

/// Every subcommand, in the order `specsim help` lists them.
std::span<const Command> commands();

/// `specsim ARGV...` (argv[0] the program's name): --version, help, a subcommand, or `run` when
/// argv[1] is none (a flag, or nothing). Prints through std::cout and std::cerr; returns the exit
/// code (an unknown subcommand: the error line, exit 2).
int dispatch(int argc, char** argv);

}  // namespace specsim::cli
