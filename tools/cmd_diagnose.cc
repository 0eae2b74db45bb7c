// `specsim diagnose LOG`: an SGLang server log -> the scenario that reproduces its measured tok/s
// (-o FILE, for `specsim run --scenario` and `specsim tune --scenario`) and where the log and the
// model disagree (docs/diagnose.md).
#include <fmt/format.h>

#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "diagnose/diagnose.h"
#include "diagnose/scenario_yaml.h"
#include "scenario/yaml_file.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::cli {

namespace {
using nlohmann::json;
using namespace specsim::diagnose;

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json findings_json(const std::vector<Finding>& fs) {
  json a = json::array();
  for (const auto& f : fs)
    a.push_back({{"id", f.id},
                 {"warning", f.warning},
                 {"message", f.message},
                 {"figure", opt(f.figure)},
                 {"unit", f.unit},
                 {"range", f.range_lo && f.range_hi ? json{*f.range_lo, *f.range_hi} : json(nullptr)},
                 {"advice", f.advice},
                 {"line", f.line()}});
  return a;
}

json report_json(const Diagnosis& d, const std::string& out) {
  const auto& l = d.log;
  const auto& f = d.figures;
  const auto& r = d.scenario.run;
  return {{"file", l.file},
          {"server_args_line", l.launch ? json(l.launch->line) : json(nullptr)},
          {"model", d.model},
          {"model_from", d.model_from},
          {"hardware", d.scenario.hw.spec},
          {"tp_size", r.tp_size},
          {"speculative", f.speculative},
          {"speculative_algorithm", std::string(algo_name(r.algo))},
          {"speculative_num_steps", f.speculative ? json(r.num_steps) : json(nullptr)},
          {"speculative_eagle_topk", f.speculative ? json(r.topk) : json(nullptr)},
          {"speculative_num_draft_tokens", f.speculative ? json(r.num_draft_tokens) : json(nullptr)},
          {"batch_size", l.batch_size},
          {"decode_lines", l.decode_lines},
          {"lines_used", l.line_numbers},
          {"idle_gap_lines", l.idle_gap_line_numbers()},
          {"measured",
           {{"tok_s", l.tok_s},
            {"tok_s_cv", l.tok_s_cv},
            {"accept_len", opt(l.accept_len)},
            {"context_len", opt(l.context_len)},
            {"context_from", l.context_from.empty() ? json(nullptr) : json(l.context_from)},
            {"cuda_graph_lines", l.graph_lines},
            {"eager_lines", l.eager_lines},
            {"allreduce_us", opt(f.allreduce_measured_us)}}},
          {"model_figures",
           {{"step_us", f.model_step_us},
            {"cycle_us", f.speculative ? json(f.model_cycle_us) : json(nullptr)},
            {"allreduce_us", f.allreduce_model_us},
            {"allreduces_per_cycle", f.allreduces_per_cycle}}},
          {"implied",
           {{"overhead_us_per_forward", opt(f.overhead_us)},
            {"cycle_us", opt(f.measured_cycle_us)},
            {"accept_len", opt(f.implied_accept_len)}}},
          {"reproduction",
           {{"how", std::string(reproduction_name(d.how))},
            {"measured_tok_s", d.measured_tok_s},
            {"predicted_tok_s", d.predicted_tok_s},
            {"reproduces", d.reproduces}}},
          {"findings", findings_json(d.findings)},
          {"wrote", out.empty() ? json(nullptr) : json(out)},
          {"scenario", d.scenario_file}};
}

void print_text(const Diagnosis& d, const std::string& out) {
  const auto& l = d.log;
  const auto& f = d.figures;
  const auto& r = d.scenario.run;
  fmt::print("SGLang log {}: {} decode lines{}\n", l.file, l.decode_lines,
             l.launch ? fmt::format(", launch at line {} (server_args)", l.launch->line) : ", no server_args line");
  fmt::print("  model {} ({}); hardware {}, tp {}\n", d.model, d.model_from, d.scenario.hw.spec, r.tp_size);
  if (f.speculative)
    fmt::print("  speculation {}: steps {}, topk {}, draft tokens {}\n", algo_name(r.algo), r.num_steps, r.topk,
               r.num_draft_tokens);
  else
    fmt::print("  speculation off\n");
  fmt::print("  used {} lines at #running-req {}: gen throughput median {:.2f} tok/s ({:.1f}..{:.1f}){}\n",
             l.line_numbers.size(), l.batch_size, l.tok_s, l.tok_s_min, l.tok_s_max,
             l.accept_len ? fmt::format(", accept len {:.3f}", *l.accept_len) : "");
  if (f.speculative)
    fmt::print("  model: plain step {:.0f} us, cycle {:.0f} us{}{}\n", f.model_step_us, f.model_cycle_us,
               f.measured_cycle_us ? fmt::format("; measured cycle {:.0f} us", *f.measured_cycle_us) : "",
               f.overhead_us ? fmt::format("; overhead {:.0f} us per target forward", *f.overhead_us) : "");
  else
    fmt::print("  model: plain step {:.0f} us; measured {:.0f} us{}\n", f.model_step_us, *f.measured_step_us,
               f.overhead_us ? fmt::format(" (overhead {:.0f} us per forward)", *f.overhead_us) : "");
  if (f.implied_accept_len) fmt::print("  the tok/s implies accept len {:.3f}\n", *f.implied_accept_len);
  fmt::print("  scenario: {} -> {:.2f} tok/s against the measured {:.2f} ({})\n", reproduction_name(d.how),
             d.predicted_tok_s, d.measured_tok_s, d.reproduces ? "reproduced" : "NOT reproduced");
  if (d.findings.empty())
    fmt::print("findings: none (the log and the model agree within the ranges of docs/diagnose.md)\n");
  else
    fmt::print("findings:\n");
  for (const auto& x : d.findings) fmt::print("  {} {}: {}\n", x.warning ? "!" : "-", x.id, x.line());
  if (!out.empty())
    fmt::print("wrote {}: `specsim run --scenario {}` reproduces it; `specsim tune --scenario {}` ranks settings\n",
               out, out, out);
  else
    fmt::print("-o scenario.yaml writes the scenario\n");
}

}  // namespace

int cmd_diagnose(int argc, char** argv) {
  CLI::App app{
      "specsim diagnose: an SGLang server log -> the scenario reproducing its tok/s, and where the log and "
      "the model disagree"};
  app.name("specsim diagnose");
  DiagnoseInput in;
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
  app.add_option("LOG", in.log, "SGLang server log (its server_args line and decode lines)")->required();
  opt_s("--hardware", in.hardware,
        "GPU:TOPOLOGY the log was taken on (the log does not say it), e.g. h100-sxm:nvswitch");
  opt_s("--model", in.model, "zoo model name or config.json, when the log's model_path is not a zoo model");
  opt_s("--trace", in.trace, "torch profiler trace of the server: its mean NCCL all-reduce kernel anchors the model");
  opt_s("--nccl-tests", in.nccl_tests,
        "nccl-tests all_reduce_perf log: its time at the verify payload anchors the model");
  opt_s("--baseline-from", in.baseline_log, "an SGLang log of the same server without speculation");
  opt_s("--speculative-draft-model-path", in.draft_model,
        "the draft's config.json (or zoo MODEL/DRAFT) when the zoo has no draft for the log's model");
  opt_s("--speculative-algorithm", in.algorithm, "when the log has no server_args line (EAGLE, EAGLE3, NEXTN, NONE)");
  opt_i("--tp-size", in.tp_size, "when the log has no server_args line");
  opt_i("--speculative-num-steps", in.num_steps, "when the log has no server_args line");
  opt_i("--speculative-eagle-topk", in.topk, "when the log has no server_args line");
  opt_i("--speculative-num-draft-tokens", in.num_draft_tokens, "when the log has no server_args line");
  opt_i("--batch-size", in.batch_size, "use the decode lines at this #running-req (default: the most common)");
  app.add_option("-o,--output", out, "write the scenario (.yaml or .json) for `specsim run/tune --scenario`");
  app.add_flag("--json", as_json, "print the diagnosis as one JSON object");
  return guarded(app, argc, argv, [&] {
    // A YAML scenario this build could not read back is refused, not written.
    if (is_yaml_path(out) && !yaml_supported())
      throw InputError("this build reads no YAML scenario files (built without libyaml-cpp-dev): write it as .json",
                       "-o");
    check_outputs({{out, "-o"}}, {in.log, in.baseline_log.value_or(""), in.trace.value_or(""),
                                  in.nccl_tests.value_or(""), in.model.value_or(""), in.draft_model.value_or("")});
    const Diagnosis d = diagnose::diagnose(in);
    if (!out.empty()) {
      const std::string text =
          is_yaml_path(out)
              ? to_yaml(d.scenario_file,
                        "specsim scenario written by `specsim diagnose` from the SGLang log " + in.log +
                            "\nedit it and run `specsim run --scenario FILE` or `specsim tune --scenario FILE`")
              : d.scenario_file.dump(2) + "\n";
      write_file_atomic(out, text, "-o");
    }
    if (as_json)
      std::cout << report_json(d, out).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    else
      print_text(d, out);
    return kExitOk;
  });
}

}  // namespace specsim::cli
