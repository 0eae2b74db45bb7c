#include "sweep/grid.h"

#include <fmt/format.h>

#include "util/error.h"

namespace specsim::sweep {

const char* axis_flag(int axis) {
  switch (axis) {
    case kTp: return "--tp-size";
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
  if (total > double(kMaxPoints))
    throw InputError(fmt::format("the grid has {:.0f} points, more than the {} a sweep takes: sweep fewer values",
                                 total, kMaxPoints),
                     "sweep flags");
  return static_cast<size_t>(total);
}

size_t Grid::points_per_plan() const {
  size_t n = 1;
  for (int a = kFirstEvalAxis; a < kNumAxes; ++a) n *= axis_size(a);
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
