#include "sweep/grid.h"

#include <fmt/format.h>

#include <cmath>

#include "util/error.h"

namespace specsim::sweep {

const char* axis_flag(int axis) {
  switch (axis) {
    case kTp: return "--tp-size";
    case kDp: return "--dp-size";
    case kEp: return "--ep-size";
    case kDpAttn: return "--enable-dp-attention";
    case kDtype: return "--dtype";
    case kBatch: return "--batch-size";
    case kContext: return "--context-len";
    case kGraphBs: return "--cuda-graph-max-bs";
    case kTopk: return "--speculative-eagle-topk";
    case kSteps: return "--speculative-num-steps";
    case kDraftTokens: return "--speculative-num-draft-tokens";
    case kAllReduce: return "--allreduce";
    case kAcceptLen: return "--accept-len";
    case kAcceptRate: return "--accept-rate";
  }
  return "?";
}

size_t Grid::axis_size(int axis) const {
  size_t n = 0;
  switch (axis) {
    case kTp: n = tp.size(); break;
    case kDp: n = dp.size(); break;
    case kEp: n = ep.size(); break;
    case kDpAttn: n = dp_attention.size(); break;
    case kDtype: n = dtype.size(); break;
    case kBatch: n = batch.size(); break;
    case kContext: n = context.size(); break;
    case kGraphBs: n = graph_bs.size(); break;
    case kTopk: n = topk.size(); break;
    case kSteps: n = steps.size(); break;
    case kDraftTokens: n = draft_tokens.size(); break;
    case kAllReduce: n = allreduce.size(); break;
    case kAcceptLen: n = accept_len.size(); break;
    case kAcceptRate: n = accept_rate.size(); break;
  }
  return n == 0 ? 1 : n;
}

size_t Grid::size() const {
  double total = 1;
  for (int a = 0; a < kNumAxes; ++a) total *= double(axis_size(a));
  if (total > double(kMaxPoints)) refuse_grid(*this, kMaxPoints, "more than a sweep takes");
  return static_cast<size_t>(total);
}

[[noreturn]] void refuse_grid(const Grid& g, size_t most, const std::string& why) {
  double points = 1;
  int longest = 0;
  std::vector<std::string> lists;
  for (int a = 0; a < kNumAxes; ++a) {
    points *= double(g.axis_size(a));
    if (g.axis_size(a) > g.axis_size(longest)) longest = a;
    if (g.swept(a)) lists.push_back(fmt::format("{} {}", axis_flag(a), g.axis_size(a)));
  }
  // The longest list is the one to cut: the most values it may keep, the others as given.
  const double others = points / double(g.axis_size(longest));
  const double keep = std::floor(double(most) / others);
  const std::string fix =
      keep >= 1 ? fmt::format("give {} at most {:.0f} values", axis_flag(longest), keep)
                : fmt::format("give {} one value, and fewer values to the other lists", axis_flag(longest));
  throw InputError(fmt::format("the grid has {:.0f} points ({}), {}: at most {} points; {}", points,
                               fmt::join(lists, " x "), why, most, fix),
                   axis_flag(longest));
}

size_t Grid::points_per_plan() const {
  size_t n = 1;
  for (int a = kFirstEvalAxis; a < kNumAxes; ++a) n *= axis_size(a);
  return n;
}

size_t Grid::points_per_scenario() const {
  size_t n = 1;
  for (int a = kFirstGroupAxis; a < kNumAxes; ++a) n *= axis_size(a);
  return n;
}

size_t Grid::scenarios() const {
  size_t n = 1;
  for (int a = 0; a < kFirstGroupAxis; ++a) n *= axis_size(a);
  return n;
}

std::array<size_t, kNumAxes> Grid::decode(size_t i) const {
  std::array<size_t, kNumAxes> idx{};
  for (int a = kNumAxes - 1; a >= 0; --a) {
    const size_t n = axis_size(a);
    idx[a] = i % n;
    i /= n;
  }
  return idx;
}

}  // namespace specsim::sweep
