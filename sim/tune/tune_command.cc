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
#include "scenario/command_values.h"
#include "scenario/flag_ranges.h"
#include "scenario/flag_values.h"
#include "scenario/load_scenario.h"
#include "scenario/sglang_cmdline.h"
#include "scenario/sglang_draft_rule.h"
#include "tune/layout_output.h"
#include "tune/layout_search.h"
#include "tune/tune.h"
#include "tune/tune_memory.h"
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
                        accept::TreeAcceptance& model, double draft_decay) {
  AcceptanceOrigin o;
  o.fit = accept::fit_acceptance(obs, draft_decay);
  model = o.fit->model;
  o.from = from;
  o.note = o.fit->note;
  if (o.fit->points.size() == 1)
    o.note +=
        "; one setting measured: the tree's gain over the chain rests on the assumed coverage shape "
        "(measure a second setting with topk > 1 to fit it)";
  return o;
}

// The first of the flags that state an --accept-from log's settings, or nullptr.
const char* first_stated_flag(const TuneRequest& q) {
  return q.log_steps          ? "--speculative-num-steps"
         : q.log_topk         ? "--speculative-eagle-topk"
         : q.log_draft_tokens ? "--speculative-num-draft-tokens"
                              : nullptr;
}

// The flag checks made before anything is read.
void check_request(const RunArgs& args, const TuneRequest& q) {
  std::vector<std::string> inputs = q.accept_from;
  inputs.insert(inputs.end(), {q.acceptance, q.scenario, args.model_path.value_or(""), args.hardware.value_or("")});
  check_outputs({{q.csv, "--csv"}, {q.plot, "--plot"}, {q.plot_script, "--plot-script"}}, inputs);
  const bool accept_given = args.accept_len || args.accept_rate;
  if (q.accept_from.empty() && q.acceptance.empty() && q.scenario.empty() && !accept_given)
    throw InputError(
        "no acceptance data: give --accept-from LOG (SGLang log or bench results), --acceptance FILE "
        "(per-depth rates), --accept-len N / --accept-rate P (at the deployment's setting) or --scenario FILE (its "
        "accept len)",
        "--accept-from, --acceptance, --accept-len, --scenario");
  if (!q.accept_from.empty() && !q.acceptance.empty())
    throw InputError("give --accept-from or --acceptance, not both", "--acceptance");
  if (accept_given && (!q.accept_from.empty() || !q.acceptance.empty()))
    throw InputError(std::string("give one acceptance source: ") +
                         (args.accept_len ? "--accept-len" : "--accept-rate") + " or " +
                         (q.acceptance.empty() ? "--accept-from" : "--acceptance") + ", not both",
                     args.accept_len ? "--accept-len" : "--accept-rate");
  if (!q.layouts.empty() && !q.plot.empty())
    throw InputError(
        "--plot draws one layout's search: leave it out with --layouts (--csv and --json hold the "
        "layouts' ranking)",
        "--plot");
  if (!q.plot_script.empty() && q.plot.empty()) throw InputError("--plot-script needs --plot FILE.png", "--plot");
  if (!q.plot.empty())
    check_plot_target(q.plot), plot_safe(q.plot_script, "the plot script path", "--plot-script"), check_plot_tools();
  if (const char* flag = first_stated_flag(q); flag && q.accept_from.empty() && !accept_given)
    throw InputError(std::string(flag) +
                         " states the settings an --accept-len / --accept-rate was measured at, or those of an "
                         "--accept-from log that has no server_args line; tune searches the deployment's settings "
                         "itself: drop it",
                     flag);
  if (const char* flag = first_stated_flag(q); flag && accept_given && !q.scenario.empty())
    throw InputError(std::string(flag) + " states the settings of --accept-len / --accept-rate, and --scenario " +
                         q.scenario + " holds its own: give one",
                     flag);
  std::string algo = args.algorithm.value_or("");
  std::transform(algo.begin(), algo.end(), algo.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  if (algo == "NONE")
    throw InputError("tune searches speculative settings: leave --speculative-algorithm out or name the draft's",
                     "--speculative-algorithm");
}

// The settings --accept-from logs without a server_args line ran, as the flags state them: steps
// and topk, and the draft tokens of a tree (a chain's are steps + 1).
std::optional<accept::StatedSettings> stated_settings(const TuneRequest& q) {
  if (!first_stated_flag(q)) return std::nullopt;
  namespace fr = flag_ranges;
  if (!q.log_steps || !q.log_topk)
    throw InputError(
        "the stated settings need --speculative-num-steps and --speculative-eagle-topk (and, for topk > 1, "
        "--speculative-num-draft-tokens), as the server ran them",
        q.log_steps ? "--speculative-eagle-topk" : "--speculative-num-steps");
  fr::kNumSteps.require(*q.log_steps), fr::kTopk.require(*q.log_topk);
  if (q.log_draft_tokens) fr::kDraftTokens.require(*q.log_draft_tokens);
  if (*q.log_topk > 1 && !q.log_draft_tokens)
    throw InputError(
        "a tree's (topk > 1) draft tokens are its own: give --speculative-num-draft-tokens as the server "
        "ran it",
        "--speculative-num-draft-tokens");
  accept::StatedSettings st{*q.log_steps, *q.log_topk, q.log_draft_tokens.value_or(*q.log_steps + 1), ""};
  if (const std::string why = accept::draft_shape_problem(st.steps, st.topk, st.draft_tokens); !why.empty())
    throw InputError("the stated log settings: " + why, "--speculative-num-draft-tokens");
  st.flags = fmt::format("--speculative-num-steps {} --speculative-eagle-topk {} --speculative-num-draft-tokens {}",
                         st.steps, st.topk, st.draft_tokens);
  return st;
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
    const std::optional<accept::StatedSettings> stated = stated_settings(q);
    std::vector<accept::AcceptObservation> obs, per_file;
    bool stated_used = false;
    for (const auto& path : q.accept_from) {
      const auto o = accept::read_observations(path, "--accept-from", stated ? &*stated : nullptr, &stated_used);
      obs.insert(obs.end(), o.begin(), o.end());
      // warned about per file: a published file's observations are named by their setting
      for (auto x : o) x.source = path, per_file.push_back(x);
    }
    if (stated && !stated_used)
      throw InputError(
          "every --accept-from file names its own settings (server_args lines, or bench rows): drop "
          "the stated settings (" +
              stated->flags + ")",
          "--speculative-num-steps");
    AcceptanceOrigin o = fitted(
        obs,
        "--accept-from " + list_of(q.accept_from) + (stated ? " (no server_args line: " + stated->flags + ")" : ""),
        model, s.run.accept_decay);
    o.warnings = model_mismatches(per_file, s);
    return o;
  }
  // The scenario's own accept len at its own settings (given on the command line or in the file,
  // or implied by its measured tok/s).
  Scenario at = s;
  at.run.allreduce = {AllReduceChoice{}};
  at.backends_defaulted = true;
  // an --accept-len / --accept-rate measured at stated settings: read there, not at the defaults
  const std::optional<accept::StatedSettings> stated = stated_settings(q);
  if (stated) {
    at.run.num_steps = stated->steps, at.run.topk = stated->topk, at.run.num_draft_tokens = stated->draft_tokens;
    at.run.accept_len_shape.reset();
  }
  const ScenarioResult r = run_scenario(at);
  const RunSpec& run = at.run;
  const std::string where = !q.scenario.empty() ? "--scenario " + q.scenario
                            : stated            ? "the stated setting (" + stated->flags + ")"
                                                : "the deployment's setting";
  AcceptanceOrigin o = fitted({{run.num_steps, run.topk, run.num_draft_tokens, r.accept_len, where, at.target.name}},
                              fmt::format("{}: accept len {:.3f} at steps {}, topk {}, {} draft tokens ({})", where,
                                          r.accept_len, run.num_steps, run.topk, run.num_draft_tokens, r.accept_source),
                              model, run.accept_decay);
  return o;
}

std::vector<std::string> model_mismatches(const std::vector<accept::AcceptObservation>& obs, const Scenario& s) {
  std::vector<std::string> out;
  for (const auto& o : obs) {
    if (o.model.empty() || names_target(o.model, s.target.name)) continue;
    const std::string w = fmt::format(
        "the acceptance of {} was measured on {}, and the target here is {}: a draft's acceptance belongs to its "
        "target and the text, so these rankings hold only if {} accepts alike (give --model-path to match, or "
        "acceptance measured on this target)",
        o.source, o.model, s.target.name, s.target.name);
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}

namespace {

// The deployment's flags with one layout's sizes in place of its own; a box of several nodes
// keeps its nodes' size, spanning as many of them as the layout's tp needs.
RunArgs layout_args(const RunArgs& given, const Scenario& deployment, const LayoutChoice& l) {
  RunArgs a = given;
  a.tp_size = l.tp;
  a.parallel.enable_dp_attention = l.dp_attention;
  // given, so that a scenario file's own sizes do not fill them
  a.parallel.dp_size = l.dp_attention ? l.dp : 1;
  a.parallel.ep_size = l.ep;
  if (deployment.hw.num_nodes > 1) {
    const int per_node = deployment.hw.gpus_per_node();
    a.nnodes = (l.tp + per_node - 1) / per_node;
    a.num_gpus = *a.nnodes * per_node;
  }
  return a;
}

// tune --layouts: the same acceptance and search on each layout, ranked by layout.
std::string layouts_command(const RunArgs& given, const TuneRequest& q, const TuneInput& in,
                            const AcceptanceOrigin& origin) {
  const Scenario& s = in.scenario;
  const LayoutSpace space{s.hw.num_gpus, s.target.has_moe ? s.target.moe.routed_experts : 0, s.run.layout.a2a};
  const std::vector<LayoutChoice> layouts = parse_layouts(q.layouts, space);
  check_tune_memory(draft_settings(in.max_steps, in.max_topk, in.max_draft_tokens).size(),
                    in.batch_sizes.size() * layouts.size(), std::max<std::size_t>(in.backends.size(), 2), 1);
  const auto t0 = std::chrono::steady_clock::now();
  const auto outcomes = run_layouts(in, layouts, [&](const LayoutChoice& l) {
    RunArgs a = layout_args(given, s, l);
    Scenario ls = load_scenario(q.scenario, a);
    if (!ls.run.speculative()) ls.run.algo = SpecAlgo::Eagle3;
    // a scenario file turning DP attention on applies to every layout: said, not ranked as this one
    if (ls.run.layout.dp_attention != l.dp_attention)
      throw InputError("the scenario file turns DP attention on, so layout " + l.label() +
                           " cannot run without it: name DP layouts (tpN-dpM) only",
                       "--scenario, --layouts");
    return ls;
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const LayoutReport report{in, outcomes, origin, q.layouts, secs};
  const nlohmann::json j = layout_json(report);
  require_finite_json(j, "the tuning inputs");
  write_outputs_atomic({{OutputFile{q.csv, "--csv"}, q.csv.empty() ? "" : layout_csv(report)}});
  return q.json ? dump_json(j) + "\n" : layout_text(report);
}

}  // namespace

std::string tune_command(RunArgs& args, const TuneRequest& q) {
  check_request(args, q);
  const RunArgs given = args;  // before the scenario file fills it: each layout is resolved from these
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
  // What the rankings will hold, before any is evaluated (at most two backends when none is listed).
  check_tune_memory(draft_settings(in.max_steps, in.max_topk, in.max_draft_tokens).size(), in.batch_sizes.size(),
                    std::max<std::size_t>(in.backends.size(), 2), q.top);

  // An --accept-len / --accept-rate measured at stated settings is read there (choose_acceptance),
  // so the deployment is resolved at them: the accept len is checked against their steps.
  if (args.accept_len || args.accept_rate)
    if (const auto st = stated_settings(q))
      args.num_steps = st->steps, args.topk = st->topk, args.num_draft_tokens = st->draft_tokens;
  // The deployment: the scenario file (flags override it) or the flags.
  Scenario s = load_scenario(q.scenario, args);
  if (!s.run.speculative()) {
    if (!q.scenario.empty() && q.accept_from.empty() && q.acceptance.empty())
      throw InputError("the scenario runs without speculation: it has no accept len to tune from", q.scenario);
    s.run.algo = SpecAlgo::Eagle3;
  }
  const AcceptanceOrigin origin = choose_acceptance(q, s, in.acceptance);
  in.scenario = s;
  if (!q.layouts.empty()) {
    RunArgs flags = given;
    flags.allreduce.clear();  // the backends are the search's (in.backends)
    return layouts_command(flags, q, in, origin);
  }

  const auto t0 = std::chrono::steady_clock::now();
  const TuneResult result = run_tune(in);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const TuneReport report{in, result, origin, q.top, secs};

  // Every output checked and rendered before any is written: the plot first (gnuplot may fail).
  const nlohmann::json j = tune_json(report);
  require_finite_json(j, "the tuning inputs");
  if (!q.plot.empty()) draw_tune_plot(report, q.plot, q.plot_script);
  write_outputs_atomic({{OutputFile{q.csv, "--csv"}, q.csv.empty() ? "" : tune_csv(report)}});
  return q.json ? dump_json(j) + "\n" : tune_text(report);
}

}  // namespace specsim::tune
