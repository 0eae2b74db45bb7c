#pragma once
// Families of published cases: the rows one user's deployment measured (one source, one serving
// runtime and version, one model and draft, one GPU box and tp), and the row that user is taken
// to have measured first, the anchor `validate --transfer` predicts the others from.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "validate/published_case.h"

namespace specsim {

/// The anchor rule, in words (`validate --transfer` prints it; traces/published/README.md states it).
extern const char* const kAnchorRule;

/// One family and its anchor row.
struct CaseFamily {
  std::string id;                     ///< the anchor's case id (the first row's when there is no anchor)
  std::string source;                 ///< the source's URL
  std::string deployment;             ///< runtime, version, model, draft, box and tp, in words
  std::vector<PublishedCase> cases;   ///< in the set's order
  std::optional<std::size_t> anchor;  ///< index into `cases`
  std::string no_anchor;              ///< why there is none
};

/// A case left out of every family, and why (it states too little to be run).
using SkippedCase = std::pair<PublishedCase, std::string>;

/// Groups the cases that can be run into families, in the order their first rows appear, and
/// chooses each family's anchor by kAnchorRule; the other cases go to `skipped`.
std::vector<CaseFamily> group_families(const std::vector<PublishedCase>& cases, std::vector<SkippedCase>& skipped);

}  // namespace specsim
