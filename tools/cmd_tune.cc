// `specsim tune`: which --speculative-num-steps / --speculative-eagle-topk /
// --speculative-num-draft-tokens to run at each batch size, and where to run without speculation,
// from measured acceptance (SGLang logs, bench_speculative.py results, per-depth rates or a
// scenario file) and the cycle model (docs/tune.md).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>

#include "accept/acceptance_file.h"
#include "accept/fit.h"
#include "accept/observations.h"
#include "cli_common.h"
#include "commands.h"
#include "evaluate/result_checks.h"
#include "scenario/scenario_file.h"
#include "scenario/yaml_file.h"
#include "report/gnuplot.h"
#include "sweep/range.h"
#include "tune/tune.h"
#include "tune/tune_output.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::cli {

namespace {

// Each batch size costs a full search (about 10,000 cycles at the default limits).
constexpr std::size_t kMaxBatchSizes = 256;

struct TuneFlags {
  std::vector<std::string> accept_from;
  std::string acceptance, scenario, batch = "1,2,4,8,16,32,64", csv, plot, plot_script;
  bool json = false;
  std::size_t top = 10;
  int max_steps = 8, max_topk = 8, max_draft_tokens = 64;
};

void drop(CLI::App& app, const char* name) { app.remove_option(app.get_option(name)); }

std::string list_of(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The fitted acceptance of the observations, described.
tune::AcceptanceOrigin fitted(const std::vector<accept::AcceptObservation>& obs, const std::string& from,
                              accept::TreeAcceptance& model) {
  tune::AcceptanceOrigin o;
  o.fit = accept::fit_acceptance(obs);
  model = o.fit->model;
  o.from = from;
  o.note = o.fit->note;
  if (o.fit->points.size() == 1)
    o.note +=
        "; one setting measured: the tree's gain over the chain rests on the assumed coverage shape "
        "(measure a second setting with topk > 1 to fit it)";
  return o;
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  CLI::App app{
      "specsim tune: rank every draft setting SGLang runs (steps 1-8, topk 1-8, draft tokens <= 64) by projected "
      "tok/s at each batch size and all-reduce backend, and show where speculation stops paying"};
  app.name("specsim tune");
  RunArgs args;
  TuneFlags f;
  add_run_flags(app, args);
  // Searched, or replaced by the acceptance sources below.
  for (const char* name : {"--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens",
                           "--batch-size", "--accept-len", "--accept-rate", "--measured-spec-tok-s"})
    drop(app, name);
  app.add_option("--accept-from", f.accept_from,
                 "SGLang server log(s) with server_args and accept len lines, or bench_speculative.py results "
                 "(JSON lines) / a CSV of steps,topk,num_draft_tokens,accept_len; repeatable");
  app.add_option("--acceptance", f.acceptance,
                 "per-depth acceptance rates and top-k coverage (JSON, docs/acceptance.md)");
  app.add_option("--scenario", f.scenario,
                 "scenario file (as `specsim run --scenario` reads it): the deployment, and its accept len at its "
                 "settings when no other acceptance is given");
  app.add_option("--batch-size", f.batch, "batch sizes to rank at (list or range, default 1,2,4,8,16,32,64)");
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
    std::vector<std::string> inputs = f.accept_from;
    inputs.insert(inputs.end(), {f.acceptance, f.scenario, args.model_path.value_or(""), args.hardware.value_or("")});
    check_outputs({{f.csv, "--csv"}, {f.plot, "--plot"}, {f.plot_script, "--plot-script"}}, inputs);
    if (f.accept_from.empty() && f.acceptance.empty() && f.scenario.empty())
      throw InputError(
          "no acceptance data: give --accept-from LOG (SGLang log or bench results), --acceptance FILE "
          "(per-depth rates) or --scenario FILE (its accept len)",
          "--accept-from, --acceptance, --scenario");
    if (!f.accept_from.empty() && !f.acceptance.empty())
      throw InputError("give --accept-from or --acceptance, not both", "--acceptance");
    if (!f.plot_script.empty() && f.plot.empty()) throw InputError("--plot-script needs --plot FILE.png", "--plot");
    if (!f.plot.empty())
      check_plot_target(f.plot), plot_safe(f.plot_script, "the plot script path", "--plot-script"),
          check_plot_tools();
    std::string algo = args.algorithm.value_or("");
    std::transform(algo.begin(), algo.end(), algo.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    if (algo == "NONE")
      throw InputError("tune searches speculative settings: leave --speculative-algorithm out or name the draft's",
                       "--speculative-algorithm");

    tune::TuneInput in;
    in.batch_sizes.clear();
    for (const long long b : sweep::parse_int_values(f.batch, "--batch-size", 1, 1 << 20))
      in.batch_sizes.push_back(static_cast<int>(b));
    if (in.batch_sizes.size() > kMaxBatchSizes)
      throw InputError(fmt::format("{} batch sizes: tune ranks at most {}", in.batch_sizes.size(), kMaxBatchSizes),
                       "--batch-size");
    in.max_steps = f.max_steps, in.max_topk = f.max_topk, in.max_draft_tokens = f.max_draft_tokens;
    in.backends = sweep::parse_allreduce_values(args.allreduce, "--allreduce");
    in.backends_given = !in.backends.empty();
    args.allreduce.clear();

    // The deployment: the scenario file (flags override it) or the flags.
    nlohmann::json file;
    if (!f.scenario.empty()) {
      file = is_yaml_path(f.scenario) ? read_yaml_file(f.scenario) : read_json_file(f.scenario);
      args_from_scenario_file(file, args, f.scenario);
    }
    Scenario s = resolve_scenario(args);
    if (!f.scenario.empty()) apply_scenario_file(file, s, f.scenario);
    if (!s.run.speculative()) {
      if (!f.scenario.empty() && f.accept_from.empty() && f.acceptance.empty())
        throw InputError("the scenario runs without speculation: it has no accept len to tune from", f.scenario);
      s.run.algo = SpecAlgo::Eagle3;
    }

    tune::AcceptanceOrigin origin;
    if (!f.acceptance.empty()) {
      const auto a = accept::read_acceptance_file(f.acceptance);
      in.acceptance = a.model;
      origin.from = "--acceptance " + f.acceptance + (a.source.empty() ? "" : " (" + a.source + ")");
      origin.note = a.note;
    } else if (!f.accept_from.empty()) {
      std::vector<accept::AcceptObservation> obs;
      for (const auto& path : f.accept_from) {
        const auto o = accept::read_observations(path, "--accept-from");
        obs.insert(obs.end(), o.begin(), o.end());
      }
      origin = fitted(obs, "--accept-from " + list_of(f.accept_from), in.acceptance);
    } else {
      // The scenario's own accept len at its own settings (given, or implied by its measured tok/s).
      Scenario at = s;
      at.run.allreduce = {AllReduceChoice{}};
      at.backends_defaulted = true;
      const ScenarioResult r = run_scenario(at);
      const RunSpec& run = at.run;
      origin =
          fitted({{run.num_steps, run.topk, run.num_draft_tokens, r.accept_len, f.scenario}},
                 fmt::format("--scenario {}: accept len {:.3f} at steps {}, topk {}, {} draft tokens ({})", f.scenario,
                             r.accept_len, run.num_steps, run.topk, run.num_draft_tokens, r.accept_source),
                 in.acceptance);
    }
    in.scenario = s;

    const auto t0 = std::chrono::steady_clock::now();
    const tune::TuneResult result = tune::run_tune(in);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const tune::TuneReport report{in, result, origin, f.top, secs};

    // Every output checked and rendered before any is written: the plot first (gnuplot may fail).
    const nlohmann::json j = tune::tune_json(report);
    require_finite_json(j, "the tuning inputs");
    if (!f.plot.empty()) tune::draw_tune_plot(report, f.plot, f.plot_script);
    write_outputs_atomic({{OutputFile{f.csv, "--csv"}, f.csv.empty() ? "" : tune::tune_csv(report)}});
    if (f.json)
      std::cout << j.dump(2) << "\n";
    else
      std::cout << tune::tune_text(report);
    return kExitOk;
  });
}

}  // namespace specsim::cli
