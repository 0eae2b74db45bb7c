// libFuzzer target: a combined hardware profile {"gpu": ..., "topology": ...}.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenario/hardware.h"
#include "util/error.h"
#include "util/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto j = specsim::parse_json_text(text, "fuzz");
    if (j.is_object() && j.contains("gpu")) (void)specsim::gpu_from_json(j["gpu"], "fuzz.gpu");
    if (j.is_object() && j.contains("topology")) (void)specsim::topology_from_json(j["topology"], "fuzz.topology");
  } catch (const specsim::InputError&) {
  }
  return 0;
}
