// libFuzzer target: HF config.json text -> ModelSpec -> a plan. Bad input must end in InputError,
// never a crash, hang, or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "plan/cycle_plan.h"
#include "util/error.h"
#include "util/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto cfg = specsim::parse_json_text(text, "fuzz");
    const specsim::ModelSpec m = specsim::model_from_json(cfg, "", "fuzz");
    specsim::RunSpec run;
    run.tp_size = 2;
    run.algo = specsim::SpecAlgo::None;
    if (m.layers <= 4096) (void)specsim::build_plan(m, nullptr, run);
  } catch (const specsim::InputError&) {
  }
  return 0;
}
