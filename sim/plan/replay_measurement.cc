#include "plan/replay_measurement.h"

namespace specsim {

CyclePlan strip_collectives(const CyclePlan& plan) {
  CyclePlan out = plan;
  for (auto& p : out.phases)
    for (auto& b : p.blocks) std::erase_if(b.ops, [](const Op& o) { return o.is_collective(); });
  return out;
}

PhasePlan plan_of(const PhaseMeasurement& m) {
  PhasePlan p;
  p.kind = m.kind;
  p.tokens = m.tokens;
  p.graph = m.graph;
  for (const auto& o : m.ops) {
    // Consecutive ops of one block (same name and repeat) form one OpBlock again.
    if (p.blocks.empty() || p.blocks.back().repeat != o.repeat || p.blocks.back().name != o.block)
      p.blocks.push_back(OpBlock{"", o.repeat, {}});
    Op op = o.op;
    op.dtype = o.ran_dtype;  // re-predict what the GPU ran
    p.blocks.back().ops.push_back(op);
    p.blocks.back().name = o.block.c_str();  // compared above only; valid while `m` lives
  }
  return p;
}

}  // namespace specsim
