#include "diagnose/bench_scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "evaluate/evaluate_scenario.h"
#include "scenario/load_scenario.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
namespace {

using nlohmann::json;

json row_settings(const ingest::BenchSpecRow& r, const BenchDeployment& d) {
  json s = {{"tp_size", d.tp_size},
            {"speculative_algorithm", r.speculative() ? d.algorithm : std::string("NONE")},
            {"batch_size", r.batch_size},
            // The script launches every server with --cuda-graph-max-bs BATCH_SIZE.
            {"cuda_graph_max_bs", r.batch_size}};
  if (r.speculative()) {
    s["speculative_num_steps"] = r.steps;
    s["speculative_eagle_topk"] = r.topk;
    s["speculative_num_draft_tokens"] = r.num_draft_tokens;
    s["accept_len"] = r.acc_length;
  }
  if (d.context_len) s["context_len"] = *d.context_len;
  return s;
}

}  // namespace

json bench_scenario_json(const std::vector<ingest::BenchSpecRow>& rows, const BenchDeployment& d) {
  // One measurement per setting: a setting measured twice must agree (within 10 %), else which
  // one to trust is the user's call.
  std::map<std::tuple<int, int, int, int>, const ingest::BenchSpecRow*> seen;
  const ingest::BenchSpecRow* best = nullptr;
  for (const auto& r : rows) {
    const auto key = std::make_tuple(r.batch_size, r.steps, r.topk, r.num_draft_tokens);
    if (auto it = seen.find(key); it != seen.end()) {
      if (std::abs(it->second->speed / r.speed - 1) > 0.1)
        throw InputError(fmt::format("lines {} and {} measure the same setting at {:.1f} and {:.1f} tok/s: keep one",
                                     it->second->line, r.line, it->second->speed, r.speed),
                         "--bench-speculative " + d.file);
      continue;
    }
    seen[key] = &r;
    if (r.speculative() &&
        (!best || r.batch_size < best->batch_size || (r.batch_size == best->batch_size && r.speed > best->speed)))
      best = &r;
  }
  if (!best)
    throw InputError("no speculative row (steps > 0): nothing to anchor a cycle to", "--bench-speculative " + d.file);
  json measured = json::array();
  for (const auto& [key, r] : seen) {
    // The script's speed is one request stream's; specsim's tok/s counts the whole batch.
    const std::string src =
        fmt::format("bench_speculative.py {} line {}: speed {} = acc_length {} / step_time {} s per request, x bs {}",
                    d.file, r->line, r->speed, r->acc_length, r->step_time_s, r->batch_size);
    json m = {{"origin", "bench_speculative.py"}, {"hardware", d.hardware}, {"settings", row_settings(*r, d)}};
    m[r->speculative() ? "spec_tok_s" : "baseline_tok_s"] = {{"value", r->speed * r->batch_size}, {"source", src}};
    measured.push_back(m);
  }
  json f = {{"format", "specsim-scenario-1"},
            {"title",
             fmt::format("{} on {}, TP {}: bench_speculative.py results ({})", d.model, d.hardware, d.tp_size, d.file)},
            {"notes", json::array({fmt::format("anchored to the {} settings bench_speculative.py measured (line {} is "
                                               "the scenario's own setting: the fastest at the smallest batch)",
                                               seen.size(), best->line)})},
            {"model", d.model},
            {"hardware", d.hardware},
            {"settings", row_settings(*best, d)},
            {"measured", measured}};
  if (!d.draft.empty()) f["draft"] = d.draft;
  return f;
}

void write_bench_scenario(const std::vector<ingest::BenchSpecRow>& rows, const BenchDeployment& d,
                          const std::string& path) {
  const json f = bench_scenario_json(rows, d);
  RunArgs args;
  Scenario s = load_scenario(ScenarioFile{path, f}, args);
  run_scenario(s);  // its anchors derived: contradictory rows are refused here, not by the next run
  require_utf8_json(f, "--save-scenario");  // its paths must read back as they are
  write_file_atomic(path, dump_json(f) + "\n", "--save-scenario");
}

std::string bench_rows_text(const std::vector<ingest::BenchSpecRow>& rows, bool as_json) {
  if (as_json) {
    json a = json::array();
    for (const auto& r : rows)
      a.push_back({{"line", r.line},
                   {"batch_size", r.batch_size},
                   {"steps", r.steps},
                   {"topk", r.topk},
                   {"num_draft_tokens", r.num_draft_tokens},
                   {"acc_length", r.acc_length},
                   {"step_time_s", r.step_time_s},
                   {"tok_per_s", r.speed}});
    return dump_json(json{{"kind", "bench_speculative"}, {"rows", a}}) + "\n";
  }
  std::string out =
      fmt::format("bench_speculative.py results: {} rows\n{:>5} {:>5} {:>5} {:>5} {:>6} {:>8} {:>12} {:>9}\n",
                  rows.size(), "line", "bs", "steps", "topk", "draft", "acc_len", "step_ms", "tok/s");
  for (const auto& r : rows)
    out += fmt::format("{:>5} {:>5} {:>5} {:>5} {:>6} {:>8.3f} {:>12.3f} {:>9.2f}{}\n", r.line, r.batch_size, r.steps,
                       r.topk, r.num_draft_tokens, r.acc_length, 1e3 * r.step_time_s, r.speed,
                       r.speculative() ? "" : "  (plain decoding)");
  return out;
}

}  // namespace specsim
