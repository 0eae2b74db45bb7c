#include "plan/allreduce_cases.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace specsim {

std::vector<AllReduceCase> distinct_allreduces(const CyclePlan& plan) {
  std::vector<AllReduceCase> out;
  for (const auto& ph : plan.phases) {
    std::map<std::size_t, std::size_t> index;  // bytes -> position in `out`
    for (const auto& b : ph.blocks)
      for (const auto& op : b.ops) {
        if (op.kind != OpKind::AllReduce || !(op.comm_bytes > 0)) continue;
        const auto bytes = static_cast<std::size_t>(std::llround(op.comm_bytes));
        auto [it, fresh] = index.try_emplace(bytes, out.size());
        if (fresh) out.push_back({ph.kind, bytes, 0});
        out[it->second].calls += b.repeat;
      }
  }
  return out;
}

std::string verify_line(const VerifyResult& r) {
  std::string where = r.backend;
  if (!r.phase.empty()) where += fmt::format(" {} {} bytes x {} ranks", r.phase, r.bytes, r.world);
  if (!r.verified) return fmt::format("allreduce verify: {}: {}", where, r.note);
  if (r.wrong == 0)
    return fmt::format("allreduce verify: {}: ok ({} elements match the CPU reference)", where, r.elements);
  return fmt::format("allreduce verify: {}: WRONG: {} of {} elements differ from the CPU reference{}", where, r.wrong,
                     r.elements, r.note.empty() ? "" : " (" + r.note + ")");
}

}  // namespace specsim
