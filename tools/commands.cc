// The subcommand table (commands.h): a new subcommand is one row here.
#include "commands.h"

namespace specsim::cli {

namespace {

constexpr Command kCommands[] = {
    {"run", "predict one scenario's cycle cost and tok/s (the default)", cmd_run},
    {"bench", "cycle evaluations per second on one core", cmd_bench},
    {"replay", "run the cycle on this GPU and compare measured with predicted", cmd_replay},
    {"sweep", "evaluate a grid of settings (lists, ranges) on all cores: CSV, JSON, plots", cmd_sweep},
    {"check", "rerun a scenario and compare it with a baseline JSON (exit 1 on a regression)", cmd_check},
    {"calibrate", "fit a hardware profile to measurements (nccl-tests logs, replay reports)", cmd_calibrate},
    {"ingest", "read a torch-profiler trace, SGLang log or nccl-tests log and print what it holds", cmd_ingest},
    {"diagnose", "an SGLang server log -> the scenario reproducing its tok/s, and where log and model disagree",
     cmd_diagnose},
    {"validate", "predict the published measurements (traces/published/) and print the errors", cmd_validate},
    {"tune", "rank draft settings (steps, topk, draft tokens) by tok/s per batch size from measured acceptance",
     cmd_tune},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

}  // namespace specsim::cli
