#include "tune/layout_output.h"

#include <fmt/format.h>

#include <algorithm>

namespace specsim::tune {

namespace {

// One layout's best rows at one batch size, with the layout they belong to.
struct Entry {
  const LayoutOutcome* o = nullptr;
  LayoutBest best;
};

// Per batch size asked, the layouts that evaluated something there, best tok/s first (ties: the
// fewer GPUs, then the order searched).
std::vector<std::pair<int, std::vector<Entry>>> ranking(const LayoutReport& r) {
  std::vector<std::pair<int, std::vector<Entry>>> out;
  for (const int bs : r.in.batch_sizes) {
    std::vector<Entry> row;
    for (const auto& o : r.outcomes)
      for (const auto& b : layout_bests(o))
        if (b.batch_size == bs && b.by_tok_s) row.push_back({&o, b});
    std::stable_sort(row.begin(), row.end(), [](const Entry& a, const Entry& b) {
      if (a.best.by_tok_s->tok_s != b.best.by_tok_s->tok_s) return a.best.by_tok_s->tok_s > b.best.by_tok_s->tok_s;
      return a.o->layout.tp < b.o->layout.tp;
    });
    out.emplace_back(bs, std::move(row));
  }
  return out;
}

std::string backend_of(const LayoutOutcome& o, const TuneRow& x) { return o.result->backends[x.backend].label(); }

std::string setting(const LayoutOutcome& o, const TuneRow& x) {
  return fmt::format("s{} k{} d{} {}", x.steps, x.topk, x.draft_tokens, backend_of(o, x));
}

}  // namespace

std::string layout_text(const LayoutReport& r) {
  const Scenario& s = r.in.scenario;
  std::size_t skipped = 0, cycles = 0;
  for (const auto& o : r.outcomes) {
    skipped += o.result ? 0 : 1;
    cycles += o.result ? o.result->evaluated : 0;
  }
  std::string out = fmt::format("specsim tune --layouts {}: {} on {}x {} ({})\n", r.layouts_asked, s.target.name,
                                s.hw.num_gpus, s.hw.gpu.name, s.hw.topo.name);
  out += fmt::format("acceptance: {}\n  {}\n", r.acceptance.from, r.acceptance.note);
  for (const auto& w : r.acceptance.warnings) out += "warning: " + w + "\n";
  out += fmt::format(
      "search: {} layouts ({} skipped) x the draft settings SGLang runs (steps 1..{}, topk 1..{}, draft tokens <= "
      "{}); {} cycles evaluated in {:.3f} s\n",
      r.outcomes.size(), skipped, r.in.max_steps, r.in.max_topk, r.in.max_draft_tokens, cycles, r.elapsed_s);
  for (const auto& o : r.outcomes) {
    if (!o.result) {
      out += fmt::format("  layout {} skipped: {}\n", o.layout.label(), o.skipped);
      continue;
    }
    for (const auto& b : o.result->batches)
      if (b.refused)
        out += fmt::format("  layout {} at batch size {} skipped: {}\n", o.layout.label(), b.batch_size,
                           b.refused->line());
  }
  for (const auto& [bs, row] : ranking(r)) {
    out += fmt::format("\nbatch size {}: layouts by their best speculative tok/s\n", bs);
    if (row.empty()) {
      out += "  no layout evaluated anything at this batch size\n";
      continue;
    }
    out += fmt::format("  {:>4} {:<14} {:>4} {:>11} {:>10} {:<22} {:>8} {:>13}\n", "rank", "layout", "gpus",
                       "plain tok/s", "spec tok/s", "setting (s k d ar)", "speedup", "best speedup");
    const Entry* fastest_gain = nullptr;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const Entry& e = row[i];
      const TuneRow& t = *e.best.by_tok_s;
      out +=
          fmt::format("  {:>4} {:<14} {:>4} {:>11.1f} {:>10.1f} {:<22} {:>7.2f}x {:>12.2f}x{}\n", i + 1,
                      e.o->layout.label(), e.o->scenario->run.num_gpus, e.best.plain_tok_s, t.tok_s, setting(*e.o, t),
                      t.speedup, e.best.by_speedup->speedup, t.tok_s > e.best.plain_tok_s ? "" : "  (does not pay)");
      if (!fastest_gain || e.best.by_speedup->speedup > fastest_gain->best.by_speedup->speedup) fastest_gain = &e;
    }
    const Entry& top = row.front();
    out += fmt::format("  fastest with speculation: {} ({:.1f} tok/s, {}); largest speedup: {} ({:.2f}x, {})\n",
                       top.o->layout.label(), top.best.by_tok_s->tok_s, setting(*top.o, *top.best.by_tok_s),
                       fastest_gain->o->layout.label(), fastest_gain->best.by_speedup->speedup,
                       setting(*fastest_gain->o, *fastest_gain->best.by_speedup));
  }
  out += "\nwhere speculation pays, by layout:\n";
  for (const auto& o : r.outcomes) {
    if (!o.result) continue;
    std::string pays, not_pays;
    for (const auto& b : o.result->batches) {
      if (b.plain.empty()) continue;
      std::string& list = b.pays() ? pays : not_pays;
      list += fmt::format("{}{}", list.empty() ? "" : ", ", b.batch_size);
    }
    out += fmt::format("  {:<14} {}{}\n", o.layout.label(),
                       pays.empty() ? "does not pay at any batch size asked" : "pays at batch size " + pays,
                       pays.empty() || not_pays.empty() ? "" : "; not at " + not_pays);
  }
  return out;
}

nlohmann::json layout_json(const LayoutReport& r) {
  using nlohmann::json;
  const Scenario& s = r.in.scenario;
  json j;
  j["model"] = s.target.name;
  j["hardware"] = {{"gpu", s.hw.gpu.name}, {"topology", s.hw.topo.name}, {"num_gpus", s.hw.num_gpus}};
  j["acceptance"] = {{"from", r.acceptance.from}, {"note", r.acceptance.note}, {"warnings", r.acceptance.warnings}};
  j["search"] = {{"layouts", r.layouts_asked},
                 {"max_steps", r.in.max_steps},
                 {"max_topk", r.in.max_topk},
                 {"max_draft_tokens", r.in.max_draft_tokens},
                 {"batch_sizes", r.in.batch_sizes}};
  auto row_json = [](const LayoutOutcome& o, const TuneRow* x) {
    if (!x) return json(nullptr);
    return json{{"steps", x->steps},
                {"topk", x->topk},
                {"draft_tokens", x->draft_tokens},
                {"allreduce", backend_of(o, *x)},
                {"accept_len", x->accept_len},
                {"cycle_us", x->cycle_us},
                {"tok_s", x->tok_s},
                {"speedup", x->speedup}};
  };
  json layouts = json::array();
  for (const auto& o : r.outcomes) {
    json l = {{"layout", o.layout.label()},
              {"tp_size", o.layout.tp},
              {"dp_size", o.layout.dp},
              {"enable_dp_attention", o.layout.dp_attention},
              {"ep_size", o.scenario ? o.scenario->run.layout.ep : o.layout.ep},
              {"num_gpus", o.scenario ? json(o.scenario->run.num_gpus) : json(nullptr)},
              {"skipped_reason", o.result ? json(nullptr) : json(o.skipped)}};
    json batches = json::array();
    for (const auto& b : layout_bests(o))
      batches.push_back({{"batch_size", b.batch_size},
                         {"skipped_reason", b.skipped.empty() ? json(nullptr) : json(b.skipped)},
                         {"plain_best_tok_s", b.plain_tok_s},
                         {"best_tok_s", row_json(o, b.by_tok_s)},
                         {"best_speedup", row_json(o, b.by_speedup)},
                         {"pays", b.by_tok_s && b.by_tok_s->tok_s > b.plain_tok_s}});
    l["batches"] = batches;
    if (o.result) {
      const auto stop = o.result->stops_paying_at();
      l["speculation_stops_paying_at_batch_size"] = stop ? json(*stop) : json(nullptr);
    }
    layouts.push_back(l);
  }
  j["layouts"] = layouts;
  json ranked = json::array();
  for (const auto& [bs, row] : ranking(r)) {
    json names = json::array();
    for (const auto& e : row) names.push_back(e.o->layout.label());
    const Entry* gain = nullptr;
    for (const auto& e : row)
      if (!gain || e.best.by_speedup->speedup > gain->best.by_speedup->speedup) gain = &e;
    ranked.push_back({{"batch_size", bs},
                      {"by_best_tok_s", names},
                      {"largest_speedup", gain ? json(gain->o->layout.label()) : json(nullptr)}});
  }
  j["ranking"] = ranked;
  j["elapsed_s"] = r.elapsed_s;
  return j;
}

std::string layout_csv(const LayoutReport& r) {
  std::string out =
      "layout,tp_size,dp_size,ep_size,enable_dp_attention,batch_size,rank,plain_tok_s,best_tok_s,steps,topk,"
      "draft_tokens,allreduce,speedup,best_speedup,pays,skipped_reason\n";
  auto quoted = [](const std::string& t) {
    std::string q = "\"";
    for (const char c : t) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const auto& [bs, row] : ranking(r))
    for (std::size_t i = 0; i < row.size(); ++i) {
      const Entry& e = row[i];
      const LayoutChoice& l = e.o->layout;
      const TuneRow& t = *e.best.by_tok_s;
      out += fmt::format("{},{},{},{},{},{},{},{:.6g},{:.6g},{},{},{},{},{:.6g},{:.6g},{},\n", l.label(), l.tp, l.dp,
                         e.o->scenario->run.layout.ep, l.dp_attention ? 1 : 0, bs, i + 1, e.best.plain_tok_s, t.tok_s,
                         t.steps, t.topk, t.draft_tokens, backend_of(*e.o, t), t.speedup, e.best.by_speedup->speedup,
                         t.tok_s > e.best.plain_tok_s ? 1 : 0);
    }
  // the layouts (and batch sizes) skipped, with their reasons
  for (const auto& o : r.outcomes) {
    const LayoutChoice& l = o.layout;
    if (!o.result) {
      out += fmt::format("{},{},{},{},{},,,,,,,,,,,,{}\n", l.label(), l.tp, l.dp, l.ep, l.dp_attention ? 1 : 0,
                         quoted(o.skipped));
      continue;
    }
    for (const auto& b : o.result->batches)
      if (b.refused)
        out += fmt::format("{},{},{},{},{},{},,,,,,,,,,,{}\n", l.label(), l.tp, l.dp, o.scenario->run.layout.ep,
                           l.dp_attention ? 1 : 0, b.batch_size, quoted(b.refused->line()));
  }
  return out;
}

}  // namespace specsim::tune
