#pragma once
// What a family's own measurements allow. A row that does at least the anchor's work (batch,
// context, draft steps, top-k, draft tokens and, for a cycle, accepted tokens) yet measures a
// shorter time than the anchor, or at most its work and a longer time, cannot be predicted closer
// than that gap by any model that reproduces the anchor and whose time does not fall as the work
// grows. Rows at the anchor's settings as stated (another dataset, a repeat) bound both ways: the
// datasets' prompt lengths count only where the rows state a context. Rows that differ in anything
// else of the deployment (quantization, KV cache, parallelism, the stack's all-reduce, the
// algorithm) are not compared. Reported beside `validate --transfer`'s errors, so a reader can
// tell a model's miss from a source whose rows disagree with each other.
#include <optional>
#include <string>

#include "validate/published_case.h"

namespace specsim {

struct DataBound {
  /// Negative: the row's error is at most this (the prediction reads at least this much low);
  /// positive: at least this. In % of the measured figure (predicted / measured - 1).
  double pct = 0;
  std::string why;  ///< the two measurements that set it, in words
};

/// The bound on `row`'s spec tok/s error from `anchor`: both state a spec tok/s with its accept
/// length (the cycle = accept length / tok/s per stream). nullopt where none applies or it is
/// under half a percent.
std::optional<DataBound> spec_data_bound(const PublishedCase& row, const PublishedCase& anchor);
/// The same for the plain-decode tok/s, over batch and context.
std::optional<DataBound> baseline_data_bound(const PublishedCase& row, const PublishedCase& anchor);

}  // namespace specsim
