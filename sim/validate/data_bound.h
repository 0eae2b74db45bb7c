#pragma once
// What a family's own measurements allow: a row that runs at least the anchor's settings (batch,
// context, draft steps, top-k, draft tokens) but measures a shorter cycle than the anchor, or at
// most the anchor's settings but a longer one, cannot be predicted closer than that gap by any
// model that reproduces the anchor and whose time does not fall as the settings grow. A repeat of
// the anchor's settings bounds both ways. Reported beside `validate --transfer`'s errors, so a
// reader can tell a model's miss from a source whose rows disagree with each other.
#include <optional>
#include <string>

#include "validate/published_case.h"

namespace specsim {

struct DataBound {
  double pct = 0;   ///< the smallest error (predicted / measured - 1, in %) any such prediction can have
  std::string why;  ///< the two measurements that set it, in words
};

/// The bound on `row`'s spec tok/s error from `anchor`: both state a spec tok/s with its accept
/// length (the cycle = accept length / tok/s per stream), the same algorithm, and settings ordered
/// one way. nullopt where none applies or it is under half a percent.
std::optional<DataBound> spec_data_bound(const PublishedCase& row, const PublishedCase& anchor);
/// The same for the plain-decode tok/s, over batch and context.
std::optional<DataBound> baseline_data_bound(const PublishedCase& row, const PublishedCase& anchor);

}  // namespace specsim
