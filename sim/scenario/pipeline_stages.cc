#include "scenario/pipeline_stages.h"

#include <fmt/format.h>

#include "util/error.h"

namespace specsim {

std::vector<int> pp_stage_layers(int layers, int pp, PpSplitRule rule) {
  if (pp < 1) throw InputError(fmt::format("pp size {} is below 1", pp), "--pp-size");
  if (layers < pp)
    throw InputError(fmt::format("{} layers do not split into {} pipeline stages (a stage needs a layer): use "
                                 "--pp-size {} or fewer",
                                 layers, pp, layers),
                     "--pp-size");
  std::vector<int> out(pp, layers / pp);
  const int rest = layers % pp;
  if (rule == PpSplitRule::SGLang) {
    out.back() += rest;  // the last stage runs to num_hidden_layers
  } else {
    // vLLM: partitions[-i] += 1 for i in 2..rest+1 (the last stage, with the norm and LM head, is
    // left out)
    for (int i = 2; i < rest + 2; ++i) out[pp - i] += 1;
  }
  return out;
}

}  // namespace specsim
