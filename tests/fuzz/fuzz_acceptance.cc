// libFuzzer target: an acceptance file (`--acceptance`, docs/acceptance.md).
#include <cstddef>
#include <cstdint>
#include <string>

#include "accept/acceptance_file.h"
#include "util/error.h"
#include "util/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)specsim::accept::acceptance_from_json(specsim::parse_json_text(text, "fuzz"), "fuzz");
  } catch (const specsim::InputError&) {
  }
  return 0;
}
