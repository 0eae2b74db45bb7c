#include "validate/data_bound.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace specsim {

namespace {

// How `row`'s settings compare with `anchor`'s, setting by setting: +1 every one at least the
// anchor's (one larger), -1 every one at most, 0 all equal, nullopt some larger and some smaller
// or one unstated. The context counts where both state it, and only then.
std::optional<int> settings_order(const PublishedCase& row, const PublishedCase& anchor, bool draft) {
  std::vector<std::pair<std::optional<int>, std::optional<int>>> pairs = {{row.batch_size, anchor.batch_size}};
  if (row.context_len || anchor.context_len) pairs.emplace_back(row.context_len, anchor.context_len);
  if (draft) {
    pairs.emplace_back(row.num_steps, anchor.num_steps);
    pairs.emplace_back(row.topk.value_or(1), anchor.topk.value_or(1));
    pairs.emplace_back(row.num_draft_tokens, anchor.num_draft_tokens);
  }
  bool larger = false, smaller = false;
  for (const auto& [r, a] : pairs) {
    if (!r || !a) return std::nullopt;
    larger |= *r > *a;
    smaller |= *r < *a;
  }
  if (larger && smaller) return std::nullopt;
  return larger ? 1 : smaller ? -1 : 0;
}

// `ratio` = the row's measured time / the anchor's (a cycle or a plain step). A row doing at least
// the anchor's work in less time, or at most its work in more, is bounded by the gap.
std::optional<double> bound_pct(int order, double ratio) {
  const bool faster_with_more = order >= 0 && ratio < 1, slower_with_less = order <= 0 && ratio > 1;
  if (!faster_with_more && !slower_with_less) return std::nullopt;
  const double pct = (ratio - 1) * 100;
  if (std::abs(pct) < 0.5) return std::nullopt;
  return pct;
}

// "reads at least 17.6% low" / "... high".
std::string bound_words(double pct) {
  return fmt::format("reads at least {:.1f}% {}", std::abs(pct), pct < 0 ? "low" : "high");
}

const char* order_words(int order) {
  return order > 0 ? "at least the anchor's settings" : order < 0 ? "at most the anchor's settings"
                                                                  : "the anchor's settings as stated";
}

}  // namespace

std::optional<DataBound> spec_data_bound(const PublishedCase& row, const PublishedCase& anchor) {
  if (!row.spec_tok_s || !row.accept_length || !anchor.spec_tok_s || !anchor.accept_length) return std::nullopt;
  if (row.algorithm != anchor.algorithm) return std::nullopt;
  const auto order = settings_order(row, anchor, true);
  if (!order) return std::nullopt;
  // Per request stream: accept length tokens a cycle at spec tok/s.
  const double row_ms = *row.accept_length / *row.spec_tok_s * 1e3;
  const double anchor_ms = *anchor.accept_length / *anchor.spec_tok_s * 1e3;
  const auto pct = bound_pct(*order, row_ms / anchor_ms);
  if (!pct) return std::nullopt;
  return DataBound{*pct, fmt::format("with {} it measures a {:.2f} ms cycle against the anchor's {:.2f} ms, so a "
                                     "prediction that keeps the anchor and whose cycle does not shrink as the "
                                     "settings grow {}",
                                     order_words(*order), row_ms, anchor_ms, bound_words(*pct))};
}

std::optional<DataBound> baseline_data_bound(const PublishedCase& row, const PublishedCase& anchor) {
  if (!row.baseline_tok_s || !anchor.baseline_tok_s) return std::nullopt;
  const auto order = settings_order(row, anchor, false);
  if (!order) return std::nullopt;
  const double row_ms = 1e3 / *row.baseline_tok_s, anchor_ms = 1e3 / *anchor.baseline_tok_s;
  const auto pct = bound_pct(*order, row_ms / anchor_ms);
  if (!pct) return std::nullopt;
  return DataBound{*pct, fmt::format("with {} (batch, context) it measures a {:.2f} ms plain step against the "
                                     "anchor's {:.2f} ms, so a prediction that keeps the anchor and whose step "
                                     "does not shrink as they grow {}",
                                     order_words(*order), row_ms, anchor_ms, bound_words(*pct))};
}

}  // namespace specsim
