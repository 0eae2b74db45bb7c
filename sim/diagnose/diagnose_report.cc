#include "diagnose/diagnose_report.h"

#include <fmt/format.h>

#include "ingest/server_log.h"

namespace specsim::diagnose {

using nlohmann::json;

namespace {

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

}  // namespace

json diagnosis_json(const Diagnosis& d, const std::string& out) {
  const auto& l = d.log;
  const auto& f = d.figures;
  const auto& r = d.scenario.run;
  std::vector<std::size_t> unsteady;
  for (const auto& u : l.unsteady_lines) unsteady.push_back(u.line);
  return {{"file", l.file},
          {"engine", l.stack},
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
          {"unsteady_lines", unsteady},
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

std::string diagnosis_text(const Diagnosis& d, const std::string& out) {
  std::string text;
  const auto& l = d.log;
  const auto& f = d.figures;
  const auto& r = d.scenario.run;
  text +=
      fmt::format("{} log {}: {} decode lines{}\n", ingest::engine_name(l.stack), l.file, l.decode_lines,
                  l.launch ? fmt::format(", launch at line {} ({})", l.launch->line, ingest::launch_line_name(l.stack))
                           : ", no " + ingest::launch_line_name(l.stack));
  text += fmt::format("  model {} ({}); hardware {}, tp {}\n", d.model, d.model_from, d.scenario.hw.spec, r.tp_size);
  if (f.speculative)
    text += fmt::format("  speculation {}: steps {}, topk {}, draft tokens {}\n", algo_name(r.algo), r.num_steps,
                        r.topk, r.num_draft_tokens);
  else
    text += "  speculation off\n";
  text += fmt::format("  used {} lines at #running-req {}: gen throughput median {:.2f} tok/s ({:.1f}..{:.1f}){}\n",
                      l.line_numbers.size(), l.batch_size, l.tok_s, l.tok_s_min, l.tok_s_max,
                      l.accept_len ? fmt::format(", accept len {:.3f}", *l.accept_len) : "");
  if (f.speculative)
    text += fmt::format("  model: plain step {:.0f} us, cycle {:.0f} us{}{}\n", f.model_step_us, f.model_cycle_us,
                        f.measured_cycle_us ? fmt::format("; measured cycle {:.0f} us", *f.measured_cycle_us) : "",
                        f.overhead_us ? fmt::format("; overhead {:.0f} us per target forward", *f.overhead_us) : "");
  else
    text += fmt::format("  model: plain step {:.0f} us; measured {:.0f} us{}\n", f.model_step_us, *f.measured_step_us,
                        f.overhead_us ? fmt::format(" (overhead {:.0f} us per forward)", *f.overhead_us) : "");
  if (f.implied_accept_len) text += fmt::format("  the tok/s implies accept len {:.3f}\n", *f.implied_accept_len);
  text += fmt::format("  scenario: {} -> {:.2f} tok/s against the measured {:.2f} ({})\n", reproduction_name(d.how),
                      d.predicted_tok_s, d.measured_tok_s, d.reproduces ? "reproduced" : "NOT reproduced");
  if (d.findings.empty())
    text += "findings: none (the log and the model agree within the ranges of docs/diagnose.md)\n";
  else
    text += "findings:\n";
  for (const auto& x : d.findings) text += fmt::format("  {} {}: {}\n", x.warning ? "!" : "-", x.id, x.line());
  if (!out.empty())
    text += fmt::format(
        "wrote {}: `specsim run --scenario {}` reproduces it; `specsim tune --scenario {}` ranks settings\n", out, out,
        out);
  else
    text += "-o scenario.yaml writes the scenario\n";
  return text;
}

}  // namespace specsim::diagnose
