// `specsim tune`: which --speculative-num-steps / --speculative-eagle-topk /
// --speculative-num-draft-tokens to run at each batch size, and where to run without speculation,
// from measured acceptance (SGLang logs, bench_speculative.py results, per-depth rates or a
// scenario file) and the cycle model (docs/tune.md).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "scenario/flag_ranges.h"
#include "tune/tune_command.h"

namespace specsim::cli {

int cmd_tune(int argc, char** argv) {
  CLI::App app{
      "specsim tune: rank every draft setting SGLang runs (steps 1-8, topk 1-8, draft tokens <= 64) by projected "
      "tok/s at each batch size and all-reduce backend, and show where speculation stops paying"};
  app.name("specsim tune");
  RunArgs args;
  tune::TuneRequest f;
  add_run_flags(app, args);
  // Searched, or replaced by the acceptance sources below.
  // (the draft-shape flags come back below, as the settings of an --accept-from log)
  for (const char* name : {"--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens",
                           "--batch-size", "--measured-spec-tok-s"})
    app.remove_option(app.get_option(name));
  app.get_option("--accept-len")
      ->description(
          "the accept len measured at the deployment's draft setting (the scenario's, or SGLang's default for the "
          "model): the acceptance of every other setting follows from it and the assumed top-k coverage");
  app.get_option("--accept-rate")
      ->description("per-token acceptance rate at the deployment's draft setting, instead of --accept-len");
  app.add_option("--accept-from", f.accept_from,
                 "SGLang server log(s) with server_args and accept len lines, or bench_speculative.py results "
                 "(JSON lines) / a CSV of steps,topk,num_draft_tokens,accept_len; repeatable");
  namespace fr = flag_ranges;
  app.add_option("--speculative-num-steps", f.log_steps,
                 "with --accept-from: the steps a log without a server_args line ran (an excerpt); with --accept-len / "
                 "--accept-rate: the steps it was measured at (tune searches the deployment's own)" +
                     fr::kNumSteps.help_suffix());
  app.add_option("--speculative-eagle-topk", f.log_topk,
                 "with --accept-from or --accept-len: that measurement's topk" + fr::kTopk.help_suffix());
  app.add_option("--speculative-num-draft-tokens", f.log_draft_tokens,
                 "with --accept-from or --accept-len: that measurement's draft tokens (a chain's: steps + 1)" +
                     fr::kDraftTokens.help_suffix());
  app.add_option("--acceptance", f.acceptance,
                 "per-depth acceptance rates and top-k coverage (JSON, docs/acceptance.md)");
  app.add_option("--scenario", f.scenario,
                 "scenario file (as `specsim run --scenario` reads it): the deployment, and its accept len at its "
                 "settings when no other acceptance is given");
  app.add_option("--batch-size", f.batch, "batch sizes to rank at (list or range, default 1,2,4,8,16,32,64)");
  app.add_option("--layouts", f.layouts,
                 "also search the parallel layout: auto (every tp x DP attention x ep SGLang accepts on the "
                 "deployment's GPUs) or a list tpN[-dpM][-epK],... (dp: DP attention); ranks layouts per batch size");
  app.add_flag("--json", f.json, "print the ranking as JSON (with elapsed_s)");
  app.add_option("--csv", f.csv, "write the shown rows as CSV to FILE");
  app.add_option(
      "--plot", f.plot,
      "draw the best setting's tok/s over plain decoding against batch size (gnuplot) into FILE.png or FILE.svg");
  app.add_option("--plot-script", f.plot_script, "also keep the gnuplot script (data inline) in this file");
  app.add_option("--top", f.top, "settings shown per batch size (0: all)")->check(CLI::Range(0, 100000));
  app.add_option("--max-steps", f.max_steps, "deepest draft searched (1..16, default 8)")->check(CLI::Range(1, 16));
  app.add_option("--max-topk", f.max_topk, "widest topk searched (1..16, default 8)")->check(CLI::Range(1, 16));
  app.add_option("--max-draft-tokens", f.max_draft_tokens, "most draft tokens searched (2..256, default 64)")
      ->check(CLI::Range(2, 256));
  return guarded(app, argc, argv, [&] {
    std::cout << tune::tune_command(args, f);
    return kExitOk;
  });
}

}  // namespace specsim::cli
