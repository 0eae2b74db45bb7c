// libFuzzer target: a scenario file, JSON or YAML (by its first byte), read into run flags as
// `run --scenario` reads it (both forms: specsim-scenario-1 and SGLang's flat --config mapping).
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenario/resolve.h"
#include "scenario/scenario_file.h"
#include "scenario/yaml_file.h"
#include "util/error.h"
#include "util/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const bool json_first = !text.empty() && (text[0] == '{' || text[0] == '[');
    const auto j = json_first ? specsim::parse_json_text(text, "fuzz") : specsim::parse_yaml_text(text, "fuzz");
    specsim::RunArgs args;
    specsim::args_from_scenario_file(j, args, "fuzz");
  } catch (const specsim::InputError&) {
  }
  return 0;
}
