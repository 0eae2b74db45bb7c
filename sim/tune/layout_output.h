#pragma once
// What `specsim tune --layouts` prints and writes: per batch size the layouts ranked by their best
// speculative tok/s, each with its best speedup over plain decoding, and the layouts skipped with
// their reasons (text, JSON, CSV).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tune/layout_search.h"
#include "tune/tune_output.h"

namespace specsim::tune {

struct LayoutReport {
  const TuneInput& in;  ///< the deployment, its acceptance and the search space
  const std::vector<LayoutOutcome>& outcomes;
  AcceptanceOrigin acceptance;
  std::string layouts_asked;  ///< --layouts as given
  double elapsed_s = 0;
};

/// Text for stdout.
std::string layout_text(const LayoutReport& r);

/// JSON (docs/tune.md#layouts).
nlohmann::json layout_json(const LayoutReport& r);

/// CSV: one row per layout and batch size: layout, tp_size, dp_size, ep_size, enable_dp_attention,
/// batch_size, rank (by best tok/s among the layouts at that batch size), plain_tok_s, best_tok_s,
/// steps, topk, draft_tokens, allreduce, speedup, best_speedup, pays, skipped_reason.
std::string layout_csv(const LayoutReport& r);

}  // namespace specsim::tune
