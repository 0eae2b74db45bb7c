#include "explain/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "util/error.h"

namespace specsim {

namespace {

/// One way an assumption can be set: the words, the flags, and what it does to the args.
struct Option {
  const char* words;
  const char* flags;
  int changes;
  std::function<void(RunArgs&)> apply;
};

// Which phases ran eagerly: SGLang graphs every phase up to --cuda-graph-max-bs; a deployment
// that ran verify (or more) eagerly shows eager-priced collectives there only.
std::vector<Option> eager_options(const RunArgs& a) {
  if (a.eager_phases || a.disable_cuda_graph) return {{"", "", 0, [](RunArgs&) {}}};
  return {{"", "", 0, [](RunArgs&) {}},
          {"verify ran eagerly", "--eager-phases verify", 1, [](RunArgs& r) { r.eager_phases = "verify"; }},
          {"verify and draft_extend ran eagerly", "--eager-phases verify,draft_extend", 2,
           [](RunArgs& r) { r.eager_phases = "verify,draft_extend"; }},
          {"every phase ran eagerly (no CUDA graphs)", "--disable-cuda-graph", 3,
           [](RunArgs& r) { r.disable_cuda_graph = true; }}};
}

// NCCL's P2P level: its default stops P2P at a CPU socket boundary (PCIe through the host then).
std::vector<Option> p2p_options(const RunArgs& a) {
  if (a.nccl_p2p_level) return {{"", "", 0, [](RunArgs&) {}}};
  return {{"", "", 0, [](RunArgs&) {}},
          {"NCCL_P2P_LEVEL=SYS (P2P between every pair of GPUs)", "--nccl-p2p-level SYS", 1,
           [](RunArgs& r) { r.nccl_p2p_level = "SYS"; }}};
}

// NCCL's algorithm and protocol, as latency-bound deployments often pin them.
std::vector<Option> algo_options(const RunArgs& a) {
  if (a.nccl_algo || a.nccl_proto) return {{"", "", 0, [](RunArgs&) {}}};
  return {{"", "", 0, [](RunArgs&) {}},
          {"NCCL_ALGO=Ring, NCCL_PROTO=LL", "--nccl-algo ring --nccl-proto LL", 1, [](RunArgs& r) {
             r.nccl_algo = "ring";
             r.nccl_proto = "LL";
           }}};
}

/// The anchors' extra terms relative to what they measured: how much the model leaves unexplained.
double unexplained(const ScenarioResult& r) {
  double sum = 0;
  for (const auto& e : r.anchor_report.entries) {
    if (!e.used) continue;
    if (e.kind == AnchorKind::AllReduce && e.measured > 0) sum += std::abs(e.derived) / e.measured;
    if (e.kind == AnchorKind::Baseline && e.model + e.derived > 0) sum += std::abs(e.derived) / (e.model + e.derived);
  }
  return sum;
}

void join(std::string& out, const char* part, const char* sep) {
  if (*part) out += (out.empty() ? "" : sep) + std::string(part);
}

}  // namespace

ExplainedRun run_explained(Scenario first, const RunArgs& args, const RunArgs& as_stated,
                           const std::function<Scenario(const RunArgs&)>& make) {
  ExplainedRun out;
  std::string conflict, conflict_where;
  try {
    out.scenario = std::move(first);
    out.result = run_scenario(out.scenario);
    return out;
  } catch (const MeasurementConflict& e) {
    conflict = e.what(), conflict_where = e.where();
    out.conflict = e.line();
  }

  struct Found {
    Assumption a;
    Scenario s;
    ScenarioResult r;
  };
  std::vector<Found> found;
  for (const Option& eager : eager_options(as_stated))
    for (const Option& p2p : p2p_options(as_stated))
      for (const Option& algo : algo_options(as_stated)) {
        const int changes = eager.changes + p2p.changes + algo.changes;
        if (changes == 0) continue;  // the settings as stated: contradicted above
        ++out.tried;
        RunArgs a = args;
        eager.apply(a), p2p.apply(a), algo.apply(a);
        Found f;
        for (const Option* o : {&eager, &p2p, &algo}) {
          join(f.a.words, o->words, ", ");
          if (*o->flags) f.a.flags.push_back(o->flags);
        }
        f.a.changes = changes;
        try {
          f.s = make(a);
          f.r = run_scenario(f.s);
        } catch (const InputError&) {
          continue;  // contradicted under this assumption too, or not a setting this box runs
        }
        f.a.unexplained = unexplained(f.r);
        found.push_back(std::move(f));
      }
  if (found.empty())
    throw MeasurementConflict(
        fmt::format("{}; none of {} assumptions tried (phases run eagerly, NCCL's P2P level, NCCL's algorithm and "
                    "protocol) makes the measurements consistent",
                    conflict, out.tried),
        conflict_where);
  std::stable_sort(found.begin(), found.end(), [](const Found& x, const Found& y) {
    if (x.a.changes != y.a.changes) return x.a.changes < y.a.changes;
    return x.a.unexplained < y.a.unexplained;
  });
  out.explained = true;
  out.chosen = found.front().a;
  out.scenario = std::move(found.front().s);
  out.result = std::move(found.front().r);
  for (std::size_t i = 1; i < found.size(); ++i) out.runners_up.push_back(found[i].a);
  for (const auto& n : explanation_notes(out)) out.scenario.notes.push_back(n);
  return out;
}

std::vector<std::string> explanation_notes(const ExplainedRun& e) {
  if (!e.explained) return {};
  std::string flags;
  for (const auto& f : e.chosen.flags) flags += (flags.empty() ? "" : " ") + f;
  std::vector<std::string> out = {fmt::format(
      "assumption: {} (state it with {}): as given, the measurements contradict each other ({}); this is the "
      "simplest of {} assumption sets tried under which every measurement holds",
      e.chosen.words, flags, e.conflict, e.tried)};
  if (e.runners_up.empty()) {
    out.push_back("no other assumption tried makes the measurements consistent");
  } else {
    const Assumption& r = e.runners_up.front();
    std::string rf;
    for (const auto& f : r.flags) rf += (rf.empty() ? "" : " ") + f;
    out.push_back(fmt::format("runner-up: {} ({}); {} consistent in all", r.words, rf, e.runners_up.size() + 1));
  }
  return out;
}

nlohmann::json explanation_json(const ExplainedRun& e) {
  auto one = [](const Assumption& a) {
    return nlohmann::json{{"assumed", a.words}, {"flags", a.flags}, {"unexplained_share", a.unexplained}};
  };
  nlohmann::json j = one(e.chosen);
  j["conflict_as_given"] = e.conflict;
  j["runner_up"] = e.runners_up.empty() ? nlohmann::json(nullptr) : one(e.runners_up.front());
  j["consistent"] = e.runners_up.size() + 1;
  j["tried"] = e.tried;
  return j;
}

}  // namespace specsim
