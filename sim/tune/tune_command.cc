#include "tune/tune_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "accept/acceptance_file.h"
#include "accept/observations.h"
#include "evaluate/evaluate_scenario.h"
#include "evaluate/result_checks.h"
#include "report/gnuplot.h"
#include "scenario/flag_values.h"
#include "scenario/load_scenario.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::tune {

namespace {

// Each batch size costs a full search (about 10,000 cycles at the default limits).
constexpr std::size_t kMaxBatchSizes = 256;

std::string list_of(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The fitted acceptance of the observations, described.
AcceptanceOrigin fitted(const std::vector<accept::AcceptObservation>& obs, const std::string& from,
                        accept::TreeAcceptance& model) {
  AcceptanceOrigin o;
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

// The flag checks made before anything is read.
void check_request(const RunArgs& args, const TuneRequest& q) {
  std::vector<std::string> inputs = q.accept_from;
  inputs.insert(inputs.end(), {q.acceptance, q.scenario, args.model_path.value_or(""), args.hardware.value_or("")});
  check_outputs({{q.csv, "--csv"}, {q.plot, "--plot"}, {q.plot_script, "--plot-script"}}, inputs);
  if (q.accept_from.empty() && q.acceptance.empty() && q.scenario.empty())
    throw InputError(
        "no acceptance data: give --accept-from LOG (SGLang log or bench results), --acceptance FILE "
        "(per-depth rates) or --scenario FILE (its accept len)",
        "--accept-from, --acceptance, --scenario");
  if (!q.accept_from.empty() && !q.acceptance.empty())
    throw InputError("give --accept-from or --acceptance, not both", "--acceptance");
  if (!q.plot_script.empty() && q.plot.empty()) throw InputError("--plot-script needs --plot FILE.png", "--plot");
  if (!q.plot.empty())
    check_plot_target(q.plot), plot_safe(q.plot_script, "the plot script path", "--plot-script"), check_plot_tools();
  std::string algo = args.algorithm.value_or("");
  std::transform(algo.begin(), algo.end(), algo.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  if (algo == "NONE")
    throw InputError("tune searches speculative settings: leave --speculative-algorithm out or name the draft's",
                     "--speculative-algorithm");
}

}  // namespace

AcceptanceOrigin choose_acceptance(const TuneRequest& q, const Scenario& s, accept::TreeAcceptance& model) {
  if (!q.acceptance.empty()) {
    const auto a = accept::read_acceptance_file(q.acceptance);
    model = a.model;
    AcceptanceOrigin origin;
    origin.from = "--acceptance " + q.acceptance + (a.source.empty() ? "" : " (" + a.source + ")");
    origin.note = a.note;
    return origin;
  }
  if (!q.accept_from.empty()) {
    std::vector<accept::AcceptObservation> obs;
    for (const auto& path : q.accept_from) {
      const auto o = accept::read_observations(path, "--accept-from");
      obs.insert(obs.end(), o.begin(), o.end());
    }
    return fitted(obs, "--accept-from " + list_of(q.accept_from), model);
  }
  // The scenario's own accept len at its own settings (given, or implied by its measured tok/s).
  Scenario at = s;
  at.run.allreduce = {AllReduceChoice{}};
  at.backends_defaulted = true;
  const ScenarioResult r = run_scenario(at);
  const RunSpec& run = at.run;
  return fitted({{run.num_steps, run.topk, run.num_draft_tokens, r.accept_len, q.scenario}},
                fmt::format("--scenario {}: accept len {:.3f} at steps {}, topk {}, {} draft tokens ({})", q.scenario,
                            r.accept_len, run.num_steps, run.topk, run.num_draft_tokens, r.accept_source),
                model);
}

std::string tune_command(RunArgs& args, const TuneRequest& q) {
  check_request(args, q);
  TuneInput in;
  in.batch_sizes.clear();
  for (const long long b : parse_int_values(q.batch, "--batch-size", 1, 1 << 20))
    in.batch_sizes.push_back(static_cast<int>(b));
  if (in.batch_sizes.size() > kMaxBatchSizes)
    throw InputError(fmt::format("{} batch sizes: tune ranks at most {}", in.batch_sizes.size(), kMaxBatchSizes),
                     "--batch-size");
  in.max_steps = q.max_steps, in.max_topk = q.max_topk, in.max_draft_tokens = q.max_draft_tokens;
  in.backends = parse_allreduce_values(args.allreduce, "--allreduce");
  in.backends_given = !in.backends.empty();
  args.allreduce.clear();

  // The deployment: the scenario file (flags override it) or the flags.
  Scenario s = load_scenario(q.scenario, args);
  if (!s.run.speculative()) {
    if (!q.scenario.empty() && q.accept_from.empty() && q.acceptance.empty())
      throw InputError("the scenario runs without speculation: it has no accept len to tune from", q.scenario);
    s.run.algo = SpecAlgo::Eagle3;
  }
  const AcceptanceOrigin origin = choose_acceptance(q, s, in.acceptance);
  in.scenario = s;

  const auto t0 = std::chrono::steady_clock::now();
  const TuneResult result = run_tune(in);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const TuneReport report{in, result, origin, q.top, secs};

  // Every output checked and rendered before any is written: the plot first (gnuplot may fail).
  const nlohmann::json j = tune_json(report);
  require_finite_json(j, "the tuning inputs");
  if (!q.plot.empty()) draw_tune_plot(report, q.plot, q.plot_script);
  write_outputs_atomic({{OutputFile{q.csv, "--csv"}, q.csv.empty() ? "" : tune_csv(report)}});
  return q.json ? j.dump(2) + "\n" : tune_text(report);
}

}  // namespace specsim::tune
