#include "validate/data_bound.h"

#include <fmt/format.h>

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "validate/case_run.h"

namespace specsim {

namespace {

// Everything of the deployment besides the work the bound orders: rows that differ here are not
// more or less of the same work.
bool same_deployment(const PublishedCase& a, const PublishedCase& b) {
  const auto key = [](const PublishedCase& c) {
    return std::make_tuple(case_algorithm(c), c.quantization, c.kv_cache_dtype, c.custom_all_reduce, c.pp_size,
                           c.dp_size, c.ep_size, c.enable_dp_attention, c.moe_a2a_backend, c.deepep_mode, c.nnodes);
  };
  return key(a) == key(b);
}

// The work each row states, as (row's, anchor's) pairs.
using WorkPairs = std::vector<std::pair<std::optional<double>, std::optional<double>>>;

WorkPairs work_pairs(const PublishedCase& row, const PublishedCase& anchor, bool speculative) {
  const auto d = [](std::optional<int> v) { return v ? std::optional<double>(*v) : std::nullopt; };
  WorkPairs pairs = {{d(row.batch_size), d(anchor.batch_size)}};
  if (row.context_len || anchor.context_len) pairs.emplace_back(d(row.context_len), d(anchor.context_len));
  if (speculative) {
    pairs.emplace_back(d(row.num_steps), d(anchor.num_steps));
    pairs.emplace_back(row.topk.value_or(1), anchor.topk.value_or(1));
    pairs.emplace_back(d(row.num_draft_tokens), d(anchor.num_draft_tokens));
    pairs.emplace_back(row.accept_length, anchor.accept_length);  // accepted tokens: the extend's work
  }
  return pairs;
}

// +1: every amount of work at least the anchor's (one larger); -1: every one at most; 0: all equal;
// nullopt: some larger and some smaller, or one the row or the anchor does not state (a context
// only one of them states leaves them unordered too).
std::optional<int> work_order(const WorkPairs& pairs) {
  bool larger = false, smaller = false;
  for (const auto& [r, a] : pairs) {
    if (!r || !a) return std::nullopt;
    larger |= *r > *a;
    smaller |= *r < *a;
  }
  if (larger && smaller) return std::nullopt;
  if (larger) return 1;
  if (smaller) return -1;
  return 0;
}

// `ratio` = the row's measured time / the anchor's (a cycle or a plain step). At least the
// anchor's work in less time, or at most its work in more, bounds the error by the gap.
std::optional<double> bound_pct(int order, double ratio) {
  const bool faster_with_more = order >= 0 && ratio < 1, slower_with_less = order <= 0 && ratio > 1;
  if (!faster_with_more && !slower_with_less) return std::nullopt;
  const double pct = (ratio - 1) * 100;
  if (std::abs(pct) < 0.5) return std::nullopt;
  return pct;
}

// "reads at least 17.7% low" / "... high".
std::string bound_words(double pct) {
  return fmt::format("reads at least {:.1f}% {}", std::abs(pct), pct < 0 ? "low" : "high");
}

std::string order_words(int order, const char* what) {
  if (order > 0) return fmt::format("at least the anchor's {}", what);
  if (order < 0) return fmt::format("at most the anchor's {}", what);
  return fmt::format("the anchor's {} as stated", what);
}

std::optional<DataBound> bound(const PublishedCase& row, const PublishedCase& anchor, bool speculative, double row_ms,
                               double anchor_ms) {
  if (!same_deployment(row, anchor)) return std::nullopt;
  const auto order = work_order(work_pairs(row, anchor, speculative));
  if (!order) return std::nullopt;
  const auto pct = bound_pct(*order, row_ms / anchor_ms);
  if (!pct) return std::nullopt;
  const char* what = speculative ? "cycle" : "plain step";
  return DataBound{
      *pct,
      fmt::format("with {} it measures a {:.2f} ms {} against the anchor's {:.2f} ms: any prediction that keeps "
                  "the anchor and does not get faster with more work {}",
                  order_words(*order, speculative ? "batch, context, draft and accepted tokens" : "batch and context"),
                  row_ms, what, anchor_ms, bound_words(*pct))};
}

}  // namespace

std::optional<DataBound> spec_data_bound(const PublishedCase& row, const PublishedCase& anchor) {
  if (!row.spec_tok_s || !row.accept_length || !anchor.spec_tok_s || !anchor.accept_length) return std::nullopt;
  // Per request stream: accept length tokens a cycle at spec tok/s.
  return bound(row, anchor, true, *row.accept_length / *row.spec_tok_s * 1e3,
               *anchor.accept_length / *anchor.spec_tok_s * 1e3);
}

std::optional<DataBound> baseline_data_bound(const PublishedCase& row, const PublishedCase& anchor) {
  if (!row.baseline_tok_s || !anchor.baseline_tok_s) return std::nullopt;
  return bound(row, anchor, false, 1e3 / *row.baseline_tok_s, 1e3 / *anchor.baseline_tok_s);
}

}  // namespace specsim
