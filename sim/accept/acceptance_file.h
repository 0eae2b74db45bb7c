#pragma once
// Per-depth acceptance given directly (`--acceptance FILE`, docs/acceptance.md#acceptance-file):
//   {"depth_rates": [0.8, 0.75, 0.7],
//    "topk_coverage": [[0.8, 0.88, 0.92], [0.75, 0.84, 0.9], [0.7, 0.8, 0.86]],
//    "source": "where the figures come from"}
// depth_rates[d] is the d+1-th draft token's acceptance given the ones above were accepted;
// topk_coverage (optional) gives, per depth, the chance the target's token is among the draft's
// top k, k = 1, 2, ...: its first value is that depth's rate. Without it the default shape is used.
#include <nlohmann/json.hpp>
#include <string>

#include "accept/tree_model.h"

namespace specsim::accept {

/// The acceptance a file describes, and what was assumed in words.
struct AcceptanceFile {
  TreeAcceptance model;
  std::string source;  ///< the file's "source", or "" when it has none
  std::string note;    ///< e.g. "top-k coverage: default shape (beta 0.5)"
};

/// Reads and checks the JSON; InputError `what (FILE:field)` on anything else than the schema:
/// unknown keys, rates outside [0, 1], a coverage row that falls with k, exceeds 1, does not start
/// at its depth's rate, or a row count other than depth_rates'.
AcceptanceFile acceptance_from_json(const nlohmann::json& j, const std::string& file);

/// Reads the file, then acceptance_from_json().
AcceptanceFile read_acceptance_file(const std::string& path);

}  // namespace specsim::accept
