#include "plan/tree_routing.h"

#include <algorithm>
#include <string>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

double tree_alternative_overlap() {
  // Read once: a model constant, not a setting (models/kernels/moe_tree_routing.json).
  static const double overlap = [] {
    const std::string path = models_dir() + "/kernels/moe_tree_routing.json";
    const char* field = "models/kernels/moe_tree_routing.json";
    const nlohmann::json j = read_json_file(path);
    if (!j.is_object()) throw InputError(path + ": needs a JSON object", field);
    const double v = sourced_number(j, "alternative_overlap", path);
    if (v < 0 || v > 1)
      throw InputError(path +
                           ": alternative_overlap must lie in [0, 1] (0: a position's candidates route "
                           "independently, 1: as one token), got " +
                           std::to_string(v),
                       field);
    return v;
  }();
  return overlap;
}

double tree_routed_tokens(int draft_tokens, int steps, double overlap) {
  if (draft_tokens <= 0) return 0;
  // Candidates for one position share their request's whole context (the prefix and their
  // ancestors) and differ in their own token; tokens at different positions are routed apart.
  const double positions = std::min(draft_tokens, std::max(steps, 0) + 1);
  return positions + (draft_tokens - positions) * (1.0 - std::clamp(overlap, 0.0, 1.0));
}

}  // namespace specsim
