#pragma once
// `specsim tune`: every draft setting SGLang runs (steps, topk, draft tokens) at every batch size
// and all-reduce backend asked, costed by the cycle model with the accept length of the tree
// acceptance model, ranked by projected tok/s per batch size (docs/tune.md).
#include <optional>
#include <string>
#include <vector>

#include "accept/tree_model.h"
#include "scenario/scenario.h"
#include "util/error.h"

namespace specsim::tune {

/// The search space and what it is evaluated on.
struct TuneInput {
  Scenario scenario;  ///< model, hardware, tp, graphs, anchors; its draft shape and batch are replaced
  accept::TreeAcceptance acceptance;
  std::vector<int> batch_sizes{1, 2, 4, 8, 16, 32, 64};
  std::vector<AllReduceChoice> backends;  ///< empty: nccl and custom (nccl alone at tp 1)
  bool backends_given = false;            ///< the user listed them (a refused one is an error)
  int max_steps = 8, max_topk = 8, max_draft_tokens = 64;
};

/// One evaluated setting at one batch size.
struct TuneRow {
  int steps = 0, topk = 0, draft_tokens = 0;
  std::size_t backend = 0;  ///< index into TuneResult::backends
  double accept_len = 0, cycle_us = 0, tok_s = 0;
  double speedup = 0;  ///< over plain decoding with the same backend at this batch size
};

/// Plain decoding with one backend.
struct PlainDecode {
  std::size_t backend = 0;
  double step_us = 0, tok_s = 0;
};

struct TuneBatch {
  int batch_size = 0;
  /// Why nothing was evaluated here when `specsim run` refuses this batch size (the model and its
  /// KV cache do not fit GPU memory): its error, with the largest batch that fits.
  std::optional<InputError> refused;
  std::vector<PlainDecode> plain;  ///< per backend that runs here
  std::vector<TuneRow> ranked;     ///< every setting x backend, best tok/s first
  double best_plain_tok_s() const;
  /// Whether the best setting beats the best plain decoding.
  bool pays() const { return !ranked.empty() && ranked.front().tok_s > best_plain_tok_s(); }
};

/// A backend that cannot run at a batch size, and why.
struct Refusal {
  std::size_t backend = 0;
  int batch_size = 0;
  std::string reason;
};

struct TuneResult {
  std::vector<AllReduceChoice> backends;
  std::vector<TuneBatch> batches;  ///< in the order of the batch sizes asked
  std::vector<Refusal> refused;
  std::size_t settings = 0;   ///< draft settings SGLang runs in the search space
  std::size_t evaluated = 0;  ///< cycle evaluations
  /// Setting x backend pairs left out: refused by a backend that runs plain decoding there, or
  /// above the engine's 2^24 tokens per forward (batch size x draft tokens).
  std::size_t skipped = 0;
  /// The smallest batch size asked at which the best setting no longer beats plain decoding
  /// (nullopt: speculation pays at every batch size asked; sizes where nothing ran are passed over).
  std::optional<int> stops_paying_at() const;
};

/// Every (steps, topk, draft tokens) SGLang runs within the limits, in search order.
struct DraftSetting {
  int steps, topk, draft_tokens;
};
std::vector<DraftSetting> draft_settings(int max_steps, int max_topk, int max_draft_tokens);

/// Runs the search. A batch size `specsim run` refuses (it does not fit GPU memory) is skipped
/// with its reason (TuneBatch::refused); InputError, that refusal, when every batch size is; and
/// when no backend can run at any batch size, or a listed backend never can.
TuneResult run_tune(const TuneInput& in);

}  // namespace specsim::tune
