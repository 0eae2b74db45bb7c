#pragma once
// The subcommands of `specsim`, one function each (argv without the subcommand name's slot).

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

}  // namespace specsim::cli
