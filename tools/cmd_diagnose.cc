// `specsim diagnose LOG [LOG...]`: an SGLang server log -> the scenario that reproduces its measured tok/s
// (-o FILE, for `specsim run --scenario` and `specsim tune --scenario`) and where the log and the
// model disagree (docs/diagnose.md).
#include <algorithm>
#include <iostream>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "diagnose/diagnose_command.h"
#include "util/error.h"

namespace specsim::cli {

int cmd_diagnose(int argc, char** argv) {
  CLI::App app{
      "specsim diagnose: an SGLang or vLLM server log -> the scenario reproducing its tok/s, and where the log and "
      "the model disagree"};
  app.name("specsim diagnose");
  diagnose::DiagnoseInput in;
  std::string out;
  bool as_json = false;
  auto opt_s = [&](const char* name, std::optional<std::string>& v, const char* help) {
    app.add_option_function<std::string>(
        name, [&v](const std::string& s) { v = s; }, help);
  };
  auto opt_i = [&](const char* name, std::optional<int>& v, const char* help) {
    app.add_option_function<int>(
           name, [&v](const int& n) { v = n; }, help)
        ->check(CLI::Range(1, 1 << 20));
  };
  std::vector<std::string> logs;
  app.add_option(
         "LOG", logs,
         "SGLang server log (its server_args line and decode lines) or vLLM V1 log (its non-default args, stats and "
         "SpecDecoding lines); several logs of one deployment at "
         "other settings: the scenario is anchored to all of them")
      ->required();
  opt_s("--hardware", in.hardware,
        "GPU:TOPOLOGY the log was taken on (the log does not say it), e.g. h100-sxm:nvswitch");
  opt_s("--model", in.model, "zoo model name or config.json, when the log's model_path is not a zoo model");
  opt_s("--trace", in.trace, "torch profiler trace of the server: its mean NCCL all-reduce kernel anchors the model");
  opt_s("--nccl-tests", in.nccl_tests,
        "nccl-tests all_reduce_perf log: its time at the verify payload anchors the model");
  opt_s("--baseline-from", in.baseline_log, "an SGLang or vLLM log of the same server without speculation");
  opt_s("--speculative-draft-model-path", in.draft_model,
        "the draft's config.json (or zoo MODEL/DRAFT) when the zoo has no draft for the log's model");
  opt_s("--speculative-algorithm", in.algorithm, "when the log has no launch line (EAGLE, EAGLE3, NEXTN, NONE)");
  opt_i("--tp-size", in.tp_size, "when the log has no launch line");
  opt_i("--speculative-num-steps", in.num_steps, "when the log has no launch line");
  opt_i("--speculative-eagle-topk", in.topk, "when the log has no launch line");
  opt_i("--speculative-num-draft-tokens", in.num_draft_tokens, "when the log has no launch line");
  opt_i("--batch-size", in.batch_size, "use the decode lines at this #running-req (default: the most common)");
  app.add_option("-o,--output", out, "write the scenario (.yaml or .json) for `specsim run/tune --scenario`");
  app.add_flag("--json", as_json, "print the diagnosis as one JSON object");
  return guarded(app, argc, argv, [&] {
    // `-- COMMAND` would read the command's words as log files
    if (std::find(argv + 1, argv + argc, std::string("--")) != argv + argc)
      throw InputError(
          "diagnose reads SGLang and vLLM server logs, not a launch command (the log's launch line holds the "
          "launch's settings): price a launch command with `specsim run --hardware GPU:TOPOLOGY -- COMMAND`",
          "LOG");
    in.log = logs.front();
    std::cout << diagnose::diagnose_command(in, out, as_json, {logs.begin() + 1, logs.end()});
    return kExitOk;
  });
}

}  // namespace specsim::cli
