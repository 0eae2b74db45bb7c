// libFuzzer target: a published measurement (traces/published/*.json) and the run validate
// builds from it, with its printed command.
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/error.h"
#include "util/json_io.h"
#include "validate/case_run.h"
#include "validate/published_case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const specsim::PublishedCase c = specsim::published_case_from_json(specsim::parse_json_text(text, "fuzz"), "fuzz");
    std::string why;
    if (const auto run = specsim::case_run(c, why)) (void)specsim::case_run_command(*run);
  } catch (const specsim::InputError&) {
  }
  return 0;
}
