// libFuzzer target: sweep list/range values (--batch-size 1..16, --accept-len 1..3:0.002,
// --allreduce fixed:10..200:10). Bad input must end in InputError; grids stay bounded.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sweep/range.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)specsim::sweep::parse_int_values(text, "--batch-size", 1, 1 << 20);
  } catch (const specsim::InputError&) {
  }
  try {
    (void)specsim::sweep::parse_double_values(text, "--accept-len");
  } catch (const specsim::InputError&) {
  }
  try {
    (void)specsim::sweep::parse_allreduce_values({text}, "--allreduce");
  } catch (const specsim::InputError&) {
  }
  return 0;
}
