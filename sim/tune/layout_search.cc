#include "tune/layout_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "util/error.h"

namespace specsim::tune {

std::string LayoutChoice::label() const {
  std::string s = fmt::format("tp{}", tp);
  if (dp_attention) s += fmt::format("-dp{}", dp);
  if (ep > 1) s += fmt::format("-ep{}", ep);
  return s;
}

namespace {

std::vector<int> divisors_of(int n) {
  std::vector<int> d;
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) d.push_back(k);
  return d;
}

// The expert-parallel sizes of a tp group: divisors of tp that split the experts (1 for a dense
// model); an all-to-all backend runs over every rank (ep = tp, as SGLang sets).
std::vector<int> ep_choices(int tp, const LayoutSpace& s) {
  if (s.routed_experts == 0) return {1};
  if (s.a2a != A2aBackend::None) return {tp};
  std::vector<int> out;
  for (int ep : divisors_of(tp))
    if (s.routed_experts % ep == 0) out.push_back(ep);
  return out;
}

// SGLang's rules for one layout, as parse_layout() states them, said against --layouts.
void check_layout(const LayoutChoice& l, const LayoutSpace& s) {
  if (l.tp > s.gpus)
    throw InputError(fmt::format("layout {}: tp {} needs more GPUs than the box's {}", l.label(), l.tp, s.gpus),
                     "--layouts");
  ParallelArgs a;
  a.enable_dp_attention = l.dp_attention;
  if (l.dp_attention) a.dp_size = l.dp;
  if (l.ep > 1) a.ep_size = l.ep;
  if (s.a2a != A2aBackend::None) a.moe_a2a_backend = a2a_backend_name(s.a2a);
  std::vector<std::string> notes;
  try {
    if (l.dp_attention && l.dp > l.tp)
      throw InputError(
          fmt::format("dp {} exceeds tp {}: DP attention splits the tp group's GPUs into dp ranks", l.dp, l.tp),
          "--dp-size");
    parse_layout(a, l.tp, s.routed_experts, notes);
  } catch (const InputError& e) {
    throw InputError(fmt::format("layout {}: {} ({} in SGLang's words)", l.label(), e.what(), e.where()), "--layouts");
  }
}

// "tp8-dp8-ep8" -> the layout; InputError naming --layouts when malformed.
LayoutChoice parse_one(const std::string& item) {
  auto bad = [&](const std::string& why) {
    return InputError(
        fmt::format("'{}' is not a layout ({}): write tpN[-dpM][-epK], e.g. tp8-dp8-ep8, or auto", item, why),
        "--layouts");
  };
  LayoutChoice l;
  bool tp = false, dp = false, ep = false;
  std::size_t at = 0;
  while (at < item.size()) {
    const std::size_t end = std::min(item.find('-', at), item.size());
    const std::string part = item.substr(at, end - at);
    at = end + 1;
    if (part.size() < 3) throw bad("an empty or short part");
    const std::string key = part.substr(0, 2), digits = part.substr(2);
    if (digits.size() > 4 ||
        !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
      throw bad("a size is a number of at most 4 digits");
    const int v = std::stoi(digits);
    if (v < 1) throw bad("a size is at least 1");
    bool& seen = key == "tp" ? tp : key == "dp" ? dp : key == "ep" ? ep : tp;
    if (key != "tp" && key != "dp" && key != "ep") throw bad("parts are tp, dp and ep");
    if (seen) throw bad(key + " given twice");
    seen = true;
    if (key == "tp") l.tp = v;
    if (key == "dp") l.dp = v, l.dp_attention = true;
    if (key == "ep") l.ep = v;
  }
  if (!tp) throw bad("no tp part");
  return l;
}

}  // namespace

std::vector<LayoutChoice> auto_layouts(const LayoutSpace& space) {
  std::vector<LayoutChoice> out;
  for (int tp : divisors_of(space.gpus)) {
    for (int ep : ep_choices(tp, space)) out.push_back({tp, 1, false, ep});
    if (space.routed_experts == 0) continue;  // DP attention is for MoE models (parse_layout)
    for (int dp : divisors_of(tp))
      if (dp >= 2)
        for (int ep : ep_choices(tp, space)) out.push_back({tp, dp, true, ep});
  }
  return out;
}

std::vector<LayoutChoice> parse_layouts(const std::string& text, const LayoutSpace& space) {
  std::vector<LayoutChoice> out;
  if (text == "auto") {
    out = auto_layouts(space);
  } else {
    std::size_t at = 0;
    while (at <= text.size()) {
      const std::size_t end = std::min(text.find(',', at), text.size());
      const LayoutChoice l = parse_one(text.substr(at, end - at));
      check_layout(l, space);
      for (const auto& x : out)
        if (x.label() == l.label()) throw InputError("layout " + l.label() + " given twice", "--layouts");
      out.push_back(l);
      at = end + 1;
    }
  }
  if (out.size() > kMaxLayouts)
    throw InputError(fmt::format("{} layouts: tune searches at most {} (each is a whole search); list fewer",
                                 out.size(), kMaxLayouts),
                     "--layouts");
  return out;
}

std::vector<LayoutBest> layout_bests(const LayoutOutcome& o) {
  std::vector<LayoutBest> out;
  if (!o.result) return out;
  for (const auto& b : o.result->batches) {
    LayoutBest x;
    x.batch_size = b.batch_size;
    if (b.refused) x.skipped = b.refused->line();
    x.plain_tok_s = b.best_plain_tok_s();
    for (const auto& r : b.ranked) {
      if (!x.by_tok_s || r.tok_s > x.by_tok_s->tok_s) x.by_tok_s = &r;
      if (!x.by_speedup || r.speedup > x.by_speedup->speedup) x.by_speedup = &r;
    }
    out.push_back(x);
  }
  return out;
}

std::vector<LayoutOutcome> run_layouts(const TuneInput& in, const std::vector<LayoutChoice>& layouts,
                                       const std::function<Scenario(const LayoutChoice&)>& resolve) {
  std::vector<LayoutOutcome> out;
  bool any = false;
  for (const auto& l : layouts) {
    LayoutOutcome o;
    o.layout = l;
    try {
      TuneInput li = in;
      li.scenario = resolve(l);
      o.result = run_tune(li);
      o.scenario = std::move(li.scenario);
      any = true;
    } catch (const InputError& e) {
      o.result.reset();
      o.skipped = e.line();
    }
    out.push_back(std::move(o));
  }
  if (!any)
    throw InputError(fmt::format("no layout can run: {} of {} skipped; the first: {}", out.size(), out.size(),
                                 out.empty() ? std::string("none asked") : out.front().skipped),
                     "--layouts");
  return out;
}

}  // namespace specsim::tune
