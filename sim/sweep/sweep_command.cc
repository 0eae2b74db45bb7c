#include "sweep/sweep_command.h"

#include <optional>

#include "report/gnuplot.h"
#include "scenario/flag_ranges.h"
#include "sweep/range.h"
#include "sweep/sweep_memory.h"
#include "sweep/sweep_output.h"
#include "util/error.h"
#include "util/output_files.h"

namespace specsim::sweep {

namespace {

// --enable-dp-attention's values in a sweep: on (the flag alone) and off.
long long on_off(const std::string& w) {
  if (w == "on" || w == "true" || w == "1") return 1;
  if (w == "off" || w == "false" || w == "0") return 0;
  throw InputError("'" + w + "' is not on or off: give --enable-dp-attention alone (on) or a list of on and off",
                   "--enable-dp-attention");
}

Grid make_grid(const ListFlags& f) {
  Grid g;
  auto ints = [](const std::string& text, const FlagRange& r) {
    return text.empty() ? std::vector<long long>{} : parse_int_values(text, std::string(r.flag), r.lo, r.hi);
  };
  namespace fr = flag_ranges;
  g.tp = ints(f.tp, fr::kTpSize);
  g.dp = ints(f.dp, fr::kDpSize);
  g.ep = ints(f.ep, fr::kEpSize);
  if (!f.dp_attention.empty())
    for (const auto& w : parse_word_values(f.dp_attention, "--enable-dp-attention"))
      g.dp_attention.push_back(on_off(w));
  g.batch = ints(f.batch, fr::kBatchSize);
  g.context = ints(f.context, fr::kContextLen);
  g.graph_bs = ints(f.graph_bs, fr::kCudaGraphMaxBs);
  g.topk = ints(f.topk, fr::kTopk);
  g.steps = ints(f.steps, fr::kNumSteps);
  g.draft_tokens = ints(f.draft_tokens, fr::kDraftTokens);
  if (!f.dtype.empty()) g.dtype = parse_word_values(f.dtype, "--dtype");
  for (const auto& d : g.dtype) parse_dtype(d, "--dtype");
  if (!f.accept_len.empty()) g.accept_len = parse_double_values(f.accept_len, "--accept-len");
  if (!f.accept_rate.empty()) g.accept_rate = parse_double_values(f.accept_rate, "--accept-rate");
  g.allreduce = parse_allreduce_values(f.allreduce, "--allreduce");
  // No --allreduce: NCCL and the custom kernel side by side, as `specsim run` shows them.
  if (g.allreduce.empty()) g.allreduce = {parse_allreduce("nccl"), parse_allreduce("custom")};
  return g;
}

// The command's flags with each batch or draft-shape axis of one value set as `run` takes it: the
// scenario, and a measurement given beside it, then resolve at the user's settings.
RunArgs base_args(const RunArgs& args, const Grid& g) {
  RunArgs a = args;
  auto one = [](const std::vector<long long>& axis, std::optional<int>& field) {
    if (axis.size() == 1) field = static_cast<int>(axis[0]);
  };
  one(g.batch, a.batch_size);
  one(g.topk, a.topk);
  one(g.steps, a.num_steps);
  one(g.draft_tokens, a.num_draft_tokens);
  return a;
}

// A command-line measurement was taken at one setting: beside an axis it depends on swept over
// several values, which one is not said. A batch size moves every tok/s and all-reduce size; the
// draft shape moves the speculative tok/s.
void refuse_ambiguous_measurement(const RunArgs& a, const Grid& g) {
  auto swept = [](const std::vector<long long>& axis) { return axis.size() > 1; };
  std::string flag, axis;
  if (a.measured_spec_tok_s)
    flag = "--measured-spec-tok-s";
  else if (a.measured_baseline_tok_s)
    flag = "--measured-baseline-tok-s";
  else if (a.measured_allreduce_us)
    flag = "--measured-allreduce-us";
  if (flag.empty()) return;
  if (swept(g.batch))
    axis = "--batch-size";
  else if (a.measured_spec_tok_s && swept(g.topk))
    axis = "--speculative-eagle-topk";
  else if (a.measured_spec_tok_s && swept(g.steps))
    axis = "--speculative-num-steps";
  else if (a.measured_spec_tok_s && swept(g.draft_tokens))
    axis = "--speculative-num-draft-tokens";
  if (axis.empty()) return;
  throw InputError(flag + " was measured at one " + axis +
                       " and the sweep runs several: give that axis one value, or save the measured run (specsim "
                       "run ... " +
                       flag + " X --save-scenario FILE) and sweep --scenario FILE",
                   flag);
}

// The first speculative axis the grid sweeps ("" when none).
std::string speculative_axis(const Grid& g) {
  if (!g.accept_len.empty()) return "--accept-len";
  if (!g.accept_rate.empty()) return "--accept-rate";
  if (!g.steps.empty()) return "--speculative-num-steps";
  if (!g.topk.empty()) return "--speculative-eagle-topk";
  if (!g.draft_tokens.empty()) return "--speculative-num-draft-tokens";
  return "";
}

// Whether the CSV goes anywhere: a file, or stdout when no other output is asked.
bool csv_wanted(const SweepOutputs& o) { return !o.csv_path.empty() || (o.json_path.empty() && o.plot_path.empty()); }

}  // namespace

SweepPlan plan_sweep(const RunArgs& args, const ListFlags& lists, const SweepOutputs& o,
                     const std::string& scenario_path) {
  check_outputs({{o.csv_path == "-" ? "" : o.csv_path, "--output"},
                 {o.json_path, "--json"},
                 {o.plot_path, "--plot"},
                 {o.plot_script, "--plot-script"}},
                {args.model_path.value_or(""), args.hardware.value_or(""), scenario_path});
  SweepPlan p;
  p.file = read_scenario_file(scenario_path);
  p.grid = make_grid(lists);
  refuse_ambiguous_measurement(args, p.grid);
  p.base = base_args(args, p.grid);
  const std::string spec_axis = speculative_axis(p.grid);
  const bool file_backends = lists.allreduce.empty() && !p.file.path.empty();
  const bool plot = !o.plot_path.empty() || o.plot_kind != "auto" || !o.plot_script.empty();
  // The scenario every point starts from, resolved once where something reads it (a scenario the
  // sweep itself would refuse is left to the points' own errors).
  std::optional<Scenario> base;
  if (file_backends || !spec_axis.empty() || plot) {
    try {
      RunArgs a = p.base;
      base = load_scenario(p.file, a);
    } catch (const InputError&) {
    }
  }
  // No --allreduce: the backends the file names, as `run --scenario FILE` compares them.
  if (base && file_backends && !base->backends_defaulted) p.grid.allreduce = base->run.allreduce;
  // A swept acceptance or draft shape of a scenario that decodes plainly would sweep nothing.
  if (base && !base->run.speculative() && !spec_axis.empty())
    throw InputError(spec_axis +
                         " sweeps speculation, and this scenario decodes plainly (no draft, or speculative "
                         "algorithm NONE): give the draft and --speculative-algorithm, or drop " +
                         spec_axis,
                     spec_axis);
  if (plot) {
    if (o.plot_path.empty()) throw InputError("--plot-kind and --plot-script need --plot FILE.png", "--plot");
    check_plot_target(o.plot_path);
    plot_safe(o.plot_script, "the plot script path", "--plot-script");
    if (base) check_plot_names(*base);  // the title's names, before any point runs
    // the request's own faults (exit 2) before the machine's (gnuplot missing, exit 3)
    p.kind = choose_plot_kind(parse_plot_kind(o.plot_kind), p.grid, p.grid.allreduce);
    check_plot_tools();
  }
  check_sweep_memory(p.grid, csv_wanted(o), !o.json_path.empty());
  return p;
}

std::string write_sweep_outputs(const SweepResult& r, const SweepPlan& p, const SweepOutputs& o, int threads) {
  if (r.evaluated == 0)
    throw InputError("no point of the grid could be evaluated; the first reason: " +
                         (r.skipped.empty() ? std::string("empty grid") : r.skipped.front().reason),
                     "");
  const bool to_stdout = o.csv_path == "-" || (o.csv_path.empty() && o.json_path.empty() && o.plot_path.empty());
  // The plot first (gnuplot may fail), then the CSV and JSON together.
  if (!o.plot_path.empty()) draw_plot(r, p.grid, p.kind, o.plot_path, o.plot_script);
  const bool csv_file = !o.csv_path.empty() && o.csv_path != "-";
  write_outputs_atomic(
      {{OutputFile{csv_file ? o.csv_path : "", "--output"}, csv_file ? sweep_csv(r, threads) : ""},
       {OutputFile{o.json_path, "--json"}, o.json_path.empty() ? "" : sweep_json(r, p.grid, threads)}});
  return to_stdout ? sweep_csv(r, threads) : "";
}

}  // namespace specsim::sweep
