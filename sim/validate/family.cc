#include "validate/family.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

#include "validate/case_run.h"

namespace specsim {

const char* const kAnchorRule =
    "the anchor is the row its user would have measured first: among the family's rows with a measured "
    "baseline tok/s (and a measured spec tok/s, when any row of the family has one), the smallest batch size, "
    "then the fewest draft tokens, steps and top-k (unstated counts last), then the case id";

namespace {

// What must match for two rows to be one deployment.
using FamilyKey = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::string,
                             std::string, std::string, std::string, int>;

FamilyKey family_key(const PublishedCase& c) {
  return {c.url,
          c.serving,
          c.serving_version.value_or(""),
          *c.zoo_model,
          c.dtype.value_or(""),
          c.zoo_draft.value_or(""),
          c.draft.value_or(""),  // two drafts that share a stand-in config are still two deployments
          case_algorithm(c),
          *c.zoo_gpu,
          case_topology(c),
          *c.tp};
}

std::string deployment_text(const PublishedCase& c) {
  const std::string algo = case_algorithm(c);
  return fmt::format("{}{}, {}{} on {}:{}, tp {}, {}", c.serving,
                     c.serving_version ? " (" + *c.serving_version + ")" : std::string(), *c.zoo_model,
                     c.dtype ? " (" + *c.dtype + ")" : std::string(), *c.zoo_gpu, case_topology(c), *c.tp,
                     algo == "NONE" ? std::string("plain decode")
                                    : fmt::format("{} draft {}", algo, c.zoo_draft.value_or("(the model's own)")));
}

// The anchor rule's order: smaller is measured first.
auto anchor_order(const PublishedCase& c) {
  return std::make_tuple(*c.batch_size, c.num_draft_tokens.value_or(INT_MAX), c.num_steps.value_or(INT_MAX),
                         c.topk.value_or(INT_MAX), c.id);
}

void choose_anchor(CaseFamily& f) {
  const bool any_spec = std::any_of(f.cases.begin(), f.cases.end(), [](const auto& c) { return c.spec_tok_s; });
  for (std::size_t i = 0; i < f.cases.size(); ++i) {
    const PublishedCase& c = f.cases[i];
    if (!c.baseline_tok_s || (any_spec && !c.spec_tok_s)) continue;
    if (!f.anchor || anchor_order(c) < anchor_order(f.cases[*f.anchor])) f.anchor = i;
  }
  if (!f.anchor)
    f.no_anchor = any_spec ? "no row measures both a baseline and a spec tok/s" : "no row measures a baseline tok/s";
  f.id = f.cases[f.anchor.value_or(0)].id;
}

}  // namespace

std::vector<CaseFamily> group_families(const std::vector<PublishedCase>& cases, std::vector<SkippedCase>& skipped) {
  std::vector<CaseFamily> families;
  std::map<FamilyKey, std::size_t> index;
  for (const auto& c : cases) {
    std::string why;
    if (!case_run(c, why)) {
      skipped.emplace_back(c, why);
      continue;
    }
    const auto [it, added] = index.try_emplace(family_key(c), families.size());
    if (added) families.push_back({"", c.url, deployment_text(c), {}, std::nullopt, ""});
    families[it->second].cases.push_back(c);
  }
  for (auto& f : families) choose_anchor(f);
  return families;
}

}  // namespace specsim
