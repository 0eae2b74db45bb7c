// libFuzzer target: a pasted SGLang launch command (`--sglang-args TEXT`), split and read into run flags.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenario/pasted_command.h"
#include "scenario/resolve.h"
#include "scenario/sglang_cmdline.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    specsim::RunArgs args;
    (void)specsim::args_from_command(specsim::split_command(text), args, "fuzz");
  } catch (const specsim::InputError&) {
  }
  return 0;
}
